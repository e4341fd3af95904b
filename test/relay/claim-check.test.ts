import type { Engine } from '../../functions/src/engine/engine';
import { refs } from '../../functions/src/engine/store/collections';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { createLogger } from '../../functions/src/log';
import type { RelayPolicy } from '../../functions/src/relay/decide';
import { relayBatch } from '../../functions/src/relay/relay-batch';
import { relayOne, type RelayDeps } from '../../functions/src/relay/relay-one';
import { createGcsPayloadStore, type StoragePolicy } from '../../functions/src/storage/gcs-payload-store';
import type { PayloadStore } from '../../functions/src/storage/payload-store';
import { lineItems, reportReference, storeOffloaded, storeReferenced, uploadReport } from '../support/claims';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload } from '../support/inbox';
import { useTestStorage } from '../support/storage';

/**
 * The relay and claim checks (issue 17, decision 4): a sender's reference is
 * stat'ed before its document correlates, outside the transaction; MISSING
 * or CHANGED parks REFERENCE_UNAVAILABLE at once, a storage outage is a
 * technical failure (retried, never parked); an offloaded payload (our own
 * object) is not stat'ed. Real Firestore and storage emulators.
 */
const REPORTS = 'sender-reports';
const PAYLOADS = 'inbox-payloads';
const storage = useTestStorage([REPORTS, PAYLOADS]);
const { db } = freshFirestores().project('relay-claims');
const policy: RelayPolicy = {
  backoffBaseMs: 60_000,
  backoffCapMs: 600_000,
  bufferWindowMs: 24 * 3_600_000,
  errorAfterAttempts: 3,
};
const FAST: StoragePolicy = {
  requestTimeoutMs: 1_000,
  maxRetries: 1,
  retryDelayMultiplier: 1,
  maxRetryDelaySeconds: 1,
  totalTimeoutSeconds: 3,
  uploadBytesPerSecond: 4 * 1024 * 1024,
};
const logs: Array<Record<string, unknown>> = [];
const log = createLogger((l) => logs.push(JSON.parse(l) as Record<string, unknown>));
const noQueue = {
  jobs: { enqueue: async (): Promise<'CREATED'> => 'CREATED' },
  timers: { enqueue: async (): Promise<'CREATED'> => 'CREATED' },
};
let engine: Engine;
let store: PayloadStore;

beforeAll(async () => {
  engine = await fixtureEngine();
  store = createGcsPayloadStore('relay-claims', FAST);
});
afterEach(() => storage.current.emulator.faults.clear());

const deps = (over: Partial<RelayDeps> = {}): RelayDeps => ({
  db,
  engine,
  policy,
  retentionMs: 7 * 86_400_000,
  transactionTimeoutMs: 10_000,
  now: () => new Date(),
  random: () => 0.5,
  payloadStore: () => store,
  ...over,
});
const inboxDoc = async (id: string): Promise<Record<string, unknown>> =>
  (await db.collection(INBOX).doc(id).get()).data() ?? {};
const statsOf = (object: string): number =>
  storage.current.emulator.requests().filter((r) => r.op === 'stat' && r.object === object).length;

async function waiting(caseId: string): Promise<string> {
  const started = await startProcessInstance(db, engine, {
    processKey: 'fixture-process',
    businessKey: caseId,
    variables: { caseId },
    now: new Date(),
  });
  await completeJobRun(db, engine, started.jobs[0]!, {}, new Date());
  return started.instance.id;
}

/** A waiting case and its completion carrying a reference to a report of `items` items. */
async function referencedCompletion(
  caseId: string,
  items = 3,
): Promise<{ id: string; instanceId: string; object: string; uri: string }> {
  const instanceId = await waiting(caseId);
  const object = `reports/${caseId}.json`;
  const ref = await uploadReport(store, REPORTS, object, { caseId, lineItems: lineItems(items) });
  const reference = reportReference(ref);
  const id = await storeReferenced(db, completionPayload(caseId, { completedItems: items }), reference);
  return { id, instanceId, object, uri: reference.uri };
}

describe("relay: a sender's reference is checked before its document correlates", () => {
  test('FOUND: correlated, one stat, and the process gets the reference as caseReport', async () => {
    const { id, instanceId, object, uri } = await referencedCompletion('C-ref-ok');
    const result = await relayOne(deps(), id);
    expect(result).toMatchObject({ kind: 'DECIDED', decision: { kind: 'DONE', processInstanceId: instanceId } });
    expect(statsOf(object)).toBe(1);
    // The first transaction read the document and its key, the second correlated as any document does.
    expect(result.stats.reads).toBeLessThanOrEqual(6);
    expect((await refs.instance(db, instanceId).get()).get('variables.caseReport')).toBe(uri);
  });

  test('MISSING (the sender deleted it): PARKED REFERENCE_UNAVAILABLE at once, logged as a park, the process untouched', async () => {
    const { id, instanceId, object, uri } = await referencedCompletion('C-ref-gone');
    await storage.current.client.bucket(REPORTS).file(object).delete();
    logs.length = 0;
    const summary = await relayBatch(deps(), noQueue, log, {
      budgetMs: 20_000,
      parallelism: 2,
      batchSize: 50,
      shards: 16,
    });
    expect(summary.parked).toMatchObject({ REFERENCE_UNAVAILABLE: 1 });
    const doc = await inboxDoc(id);
    expect(doc).toMatchObject({
      status: 'PARKED',
      reason: 'REFERENCE_UNAVAILABLE',
      attempts: 1,
      parkDetails: { uri, unavailable: 'MISSING' },
    });
    expect(String(doc.lastError)).toContain('MISSING');
    expect(doc.expireAt).toBeUndefined();
    // The "documents parked" metric counts ERROR lines with inboxId and reason.
    expect(logs).toContainEqual(
      expect.objectContaining({
        severity: 'ERROR',
        message: 'inbox document parked',
        inboxId: id,
        reason: 'REFERENCE_UNAVAILABLE',
      }),
    );
    expect((await refs.instance(db, instanceId).get()).get('variables.caseReport')).toBeUndefined();
    // Out of its key's lane: the next message of the key is not held behind it.
    expect(((await refs.correlationKey(db, 'C-ref-gone').get()).get('open') as unknown[] | undefined) ?? []).toEqual(
      [],
    );
  });

  test('CHANGED (the sender uploaded again under the same name): PARKED, lastError names the live generation', async () => {
    const { id, object, uri } = await referencedCompletion('C-ref-replaced');
    await storage.current.client
      .bucket(REPORTS)
      .file(object)
      .save(JSON.stringify({ lineItems: [] }), { resumable: false });
    const [live] = await storage.current.client.bucket(REPORTS).file(object).getMetadata();
    const result = await relayOne(deps(), id);
    expect(result).toMatchObject({ kind: 'DECIDED', decision: { kind: 'PARK', reason: 'REFERENCE_UNAVAILABLE' } });
    const doc = await inboxDoc(id);
    expect(doc).toMatchObject({
      status: 'PARKED',
      reason: 'REFERENCE_UNAVAILABLE',
      parkDetails: { uri, unavailable: 'CHANGED', liveGeneration: String(live.generation) },
    });
    expect(String(doc.lastError)).toContain(`generation ${String(live.generation)}`);
  });

  test('a storage outage is never a park: retried with backoff, then correlated once storage is back', async () => {
    const { id, instanceId, object } = await referencedCompletion('C-ref-outage');
    storage.current.emulator.faults.failNext(1_000, 503, (r) => r.op === 'stat');
    const now = new Date();
    const failed = await relayOne(deps({ now: () => now }), id);
    expect(failed).toMatchObject({ kind: 'FAILED', decision: { kind: 'RETRY', attempts: 1 } });
    let doc = await inboxDoc(id);
    expect(doc).toMatchObject({ status: 'OPEN', attempts: 1, reason: null });
    expect(String(doc.lastError)).toContain('503');
    expect((doc.nextAttemptAt as FirebaseFirestore.Timestamp).toMillis()).toBeGreaterThan(now.getTime());
    // Many failed rounds later it is still OPEN: technical failures never park, whatever the attempt count.
    for (let round = 2; round <= 4; round++) {
      const later = new Date(now.getTime() + round * 3_600_000);
      expect(await relayOne(deps({ now: () => later }), id)).toMatchObject({
        kind: 'FAILED',
        decision: { kind: 'RETRY', attempts: round },
      });
    }
    storage.current.emulator.faults.clear();
    const back = new Date(now.getTime() + 5 * 3_600_000);
    expect(await relayOne(deps({ now: () => back }), id)).toMatchObject({
      kind: 'DECIDED',
      decision: { kind: 'DONE', processInstanceId: instanceId },
    });
    doc = await inboxDoc(id);
    expect(doc.status).toBe('DONE');
    expect(statsOf(object)).toBeGreaterThanOrEqual(5);
  });

  test('a reference into an allow-listed bucket that does not exist is a technical failure, retried, never parked', async () => {
    const instanceId = await waiting('C-ref-nobucket');
    // Allowed at receipt (INBOX_REFERENCE_BUCKETS names it) but deleted or mistyped in the deployment.
    const reference = reportReference({
      bucket: 'deleted-sender-reports',
      object: 'reports/C-ref-nobucket.json',
      generation: '1764590400000000',
    });
    const id = await storeReferenced(db, completionPayload('C-ref-nobucket', { completedItems: 3 }), reference);
    const now = new Date();
    for (let round = 1; round <= 3; round++) {
      const later = new Date(now.getTime() + round * 3_600_000);
      expect(await relayOne(deps({ now: () => later }), id)).toMatchObject({
        kind: 'FAILED',
        decision: { kind: 'RETRY', attempts: round },
      });
    }
    const doc = await inboxDoc(id);
    expect(doc).toMatchObject({ status: 'OPEN', reason: null, attempts: 3 });
    expect(String(doc.lastError)).toContain('the bucket does not exist');
    expect((await refs.instance(db, instanceId).get()).get('variables.caseReport')).toBeUndefined();
  });

  test('a relay without a payload store fails such a document technically, never parks it', async () => {
    const { id } = await referencedCompletion('C-ref-nostore');
    const withoutStore: RelayDeps = {
      db,
      engine,
      policy,
      retentionMs: 7 * 86_400_000,
      transactionTimeoutMs: 10_000,
      now: () => new Date(),
      random: () => 0.5,
    };
    const result = await relayOne(withoutStore, id);
    expect(result).toMatchObject({ kind: 'FAILED', decision: { kind: 'RETRY' } });
    expect(await inboxDoc(id)).toMatchObject({ status: 'OPEN' });
  });

  test("an offloaded payload is not stat'ed (the inbox wrote it): correlated with its reference as caseReport and a DONE without expireAt", async () => {
    const instanceId = await waiting('C-off-relay');
    const { id, offloaded } = await storeOffloaded(
      db,
      store,
      PAYLOADS,
      completionPayload('C-off-relay', { lineItems: lineItems(3_000, 200) }),
    );
    const result = await relayOne(deps(), id);
    expect(result).toMatchObject({ kind: 'DECIDED', decision: { kind: 'DONE', processInstanceId: instanceId } });
    expect(statsOf(offloaded.object)).toBe(0);
    const instance = await refs.instance(db, instanceId).get();
    expect(instance.get('variables.caseReport')).toBe(offloaded.uri);
    // The summary, not the 3,000 items, became variables.
    expect(instance.get('variables.lineItems')).toBeUndefined();
    expect(instance.get('variables.completedItems')).toBe(5);
    const doc = await inboxDoc(id);
    expect(doc.expireAt).toBeUndefined();
    expect(
      (doc.payloadExpireAt as FirebaseFirestore.Timestamp).toMillis() -
        (doc.processedAt as FirebaseFirestore.Timestamp).toMillis(),
    ).toBe(7 * 86_400_000);
  });
});
