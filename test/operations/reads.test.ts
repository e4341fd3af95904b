import type { Firestore } from '@google-cloud/firestore';
import request from 'supertest';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../../functions/src/config';
import type { Engine } from '../../functions/src/engine/engine';
import { refs } from '../../functions/src/engine/store/collections';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { moveToken } from '../../functions/src/engine/store/move-token';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { createLogger } from '../../functions/src/log';
import { listDocuments, readDocument, rowOf, view } from '../../functions/src/operations/documents';
import { instancesByBusinessKey, readInstance } from '../../functions/src/operations/instances';
import { readOverview } from '../../functions/src/operations/overview';
import type { OperationsDeps } from '../../functions/src/operations/types';
import { REASONS } from '../../functions/src/operations/vocabulary';
import { relayOne } from '../../functions/src/relay/relay-one';
import { createGcsPayloadStore } from '../../functions/src/storage/gcs-payload-store';
import type { PayloadStore } from '../../functions/src/storage/payload-store';
import { storeOffloaded } from '../support/claims';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';
import { envelope } from '../support/push';
import { testDeadLetterReceiver } from '../support/receiver';
import { useTestStorage } from '../support/storage';
import { FIXTURE_ENV, FIXTURE_MODELS, FIXTURE_REGISTRY } from '../support/app';

/**
 * The read side of the operations module (overview, document list and
 * page, instance page) against the Firestore and Storage emulators, with
 * documents written the way the receiver, the relay and the dead-letter
 * endpoint write them. Timings are printed, never asserted.
 */
const PAYLOADS = 'inbox-payloads-reads';
useTestStorage([PAYLOADS]);
const firestore = freshFirestores();
const DAY = 86_400_000;
let engine: Engine;
let store: PayloadStore;

beforeAll(async () => {
  engine = await fixtureEngine();
  store = createGcsPayloadStore('reads');
});

function depsFor(db: Firestore, projectId: string, now: () => Date = () => new Date()): OperationsDeps {
  const config = loadConfig({ GOOGLE_CLOUD_PROJECT: projectId, INBOX_PAYLOAD_BUCKET: PAYLOADS, ...FIXTURE_ENV });
  return {
    db: () => db,
    engine: () => Promise.resolve(engine),
    registry: () => FIXTURE_REGISTRY,
    modelsDir: () => FIXTURE_MODELS,
    jobQueue: null,
    timerQueue: null,
    payloadStore: () => store,
    config,
    log: createLogger(() => undefined),
    now,
  };
}

/** PARKED documents as the relay leaves them (status, reason, times), `count` of them with ids `prefix-00000`…, in batches of 500. */
async function seedParked(db: Firestore, prefix: string, count: number, reason = 'MANUAL'): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(5, '0')}`);
  for (let i = 0; i < ids.length; i += 500) {
    const batch = db.batch();
    for (const id of ids.slice(i, i + 500))
      batch.set(db.collection(INBOX).doc(id), {
        status: 'PARKED',
        reason,
        messageName: 'TaskCompleted',
        correlationKey: id,
        attempts: 1,
        receivedAt: new Date(Date.now() - DAY),
        parkedAt: new Date(),
        shard: 0,
      });
    await batch.commit();
  }
  return ids;
}

const relayDeps = (db: Firestore) => ({
  db,
  engine,
  policy: { backoffBaseMs: 1_000, backoffCapMs: 1_000, bufferWindowMs: DAY, errorAfterAttempts: 3 },
  retentionMs: 7 * DAY,
  transactionTimeoutMs: 10_000,
  now: () => new Date(),
  random: () => 0.5,
  payloadStore: () => store,
});

async function waiting(db: Firestore, caseId: string): Promise<string> {
  const started = await startProcessInstance(db, engine, {
    processKey: 'fixture-process',
    businessKey: caseId,
    variables: { caseId },
    now: new Date(),
  });
  await completeJobRun(db, engine, started.jobs[0]!, {}, new Date());
  return started.instance.id;
}

describe('readOverview', () => {
  test('the counts by status and by reason are those of Firestore, every reason listed', async () => {
    const { db, projectId } = firestore.project('reads-overview');
    await seedParked(db, 'manual', 3);
    await seedParked(db, 'nowait', 2, 'NO_WAITING_INSTANCE');
    await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-ov-1') });
    await storePushed(db, {
      name: 'TaskCompleted',
      payload: completionPayload('C-ov-2'),
      receivedAt: new Date(Date.now() - 60_000),
    });
    const o = await readOverview(depsFor(db, projectId));
    const all = (await db.collection(INBOX).get()).docs.map((d) => d.data());
    const count = (f: (d: FirebaseFirestore.DocumentData) => boolean): number => all.filter(f).length;
    expect(o.counts).toEqual({
      OPEN: count((d) => d.status === 'OPEN'),
      DONE: count((d) => d.status === 'DONE'),
      PARKED: count((d) => d.status === 'PARKED'),
    });
    expect(o.counts).toEqual({ OPEN: 2, DONE: 0, PARKED: 5 });
    expect(Object.keys(o.parkedByReason).sort()).toEqual([...REASONS].sort());
    for (const r of REASONS) expect(o.parkedByReason[r]).toBe(count((d) => d.status === 'PARKED' && d.reason === r));
    expect(o.oldestOpenAgeSeconds).toBeGreaterThanOrEqual(60);
    expect(o.waiting.map((w) => w.messageName)).toContain('TaskCompleted');
  });
});

describe('listDocuments', () => {
  test('250 PARKED with limit 100: 3 pages in id order, none twice, none missed, the last says it is the last', async () => {
    const { db, projectId } = firestore.project('reads-paging');
    const ids = await seedParked(db, 'p', 250);
    await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-open-among') });
    const deps = depsFor(db, projectId);
    const pages: string[][] = [];
    let after: string | null = null;
    do {
      const page = await listDocuments(deps, { status: 'PARKED' }, { limit: 100, after });
      pages.push(page.documents.map((d) => d.id));
      after = page.next;
    } while (after !== null && pages.length < 10);
    expect(pages.map((p) => p.length)).toEqual([100, 100, 50]);
    expect(pages.flat()).toEqual(ids);
    expect(new Set(pages.flat()).size).toBe(250);
  });

  test('the age filter pages past newer documents and keeps the cursor', async () => {
    const { db, projectId } = firestore.project('reads-age');
    await seedParked(db, 'old', 3);
    const batch = db.batch();
    for (const id of ['new-1', 'new-2'])
      batch.set(db.collection(INBOX).doc(id), {
        status: 'PARKED',
        reason: 'MANUAL',
        attempts: 0,
        receivedAt: new Date(),
      });
    await batch.commit();
    const deps = depsFor(db, projectId);
    const first = await listDocuments(deps, { status: 'PARKED', olderThanMs: 3_600_000 }, { limit: 2, after: null });
    expect(first.documents.map((d) => d.id)).toEqual(['old-00000', 'old-00001']);
    const second = await listDocuments(
      deps,
      { status: 'PARKED', olderThanMs: 3_600_000 },
      { limit: 2, after: first.next },
    );
    expect(second).toEqual({ documents: [expect.objectContaining({ id: 'old-00002', reason: 'MANUAL' })], next: null });
  });

  test('10,000 PARKED: the first page (timed, printed)', async () => {
    const { db, projectId } = firestore.project('reads-10k');
    await seedParked(db, 'k', 10_000);
    const deps = depsFor(db, projectId);
    await listDocuments(deps, { status: 'PARKED' }, { limit: 100, after: null });
    const t0 = performance.now();
    const page = await listDocuments(deps, { status: 'PARKED' }, { limit: 100, after: null });
    const ms = performance.now() - t0;
    const t1 = performance.now();
    const deep = await listDocuments(deps, { status: 'PARKED' }, { limit: 100, after: 'k-09000' });
    const deepMs = performance.now() - t1;
    process.stdout.write(
      `listDocuments, 10,000 PARKED, limit 100: first page ${ms.toFixed(0)} ms, page after k-09000 ${deepMs.toFixed(0)} ms\n`,
    );
    expect(page.documents).toHaveLength(100);
    expect(page.next).toBe('k-00099');
    expect(deep.documents[0]?.id).toBe('k-09001');
  }, 180_000);
});

describe('readDocument', () => {
  test('a parked document: its row, the explanation in words, JSON-safe stored fields', async () => {
    const { db, projectId } = firestore.project('reads-doc-parked');
    const id = await storePushed(db, {
      name: 'TaskCompleted',
      payload: completionPayload('C-late'),
      receivedAt: new Date(Date.now() - 2 * DAY),
    });
    await relayOne(relayDeps(db), id);
    const v = await readDocument(depsFor(db, projectId), id);
    expect(v?.row).toMatchObject({
      id,
      status: 'PARKED',
      reason: 'NO_WAITING_INSTANCE',
      correlationKey: 'C-late',
      attempts: 1,
    });
    expect(v?.explanation.summary).toContain('PARKED');
    expect(v?.explanation.next.join('\n')).toContain(id);
    expect(v?.payload).toMatchObject({ inline: completionPayload('C-late'), offloaded: null, reference: null });
    expect(typeof v?.stored.receivedAt).toBe('string');
    expect(JSON.parse(JSON.stringify(v))).toEqual(v);
    expect(await readDocument(depsFor(db, projectId), 'no-such-doc')).toBeNull();
  });

  test('an offloaded document: the object read and its state', async () => {
    const { db, projectId } = firestore.project('reads-doc-offloaded');
    const payload = completionPayload('C-off');
    const { id, offloaded, bytes } = await storeOffloaded(db, store, PAYLOADS, payload);
    const v = await readDocument(depsFor(db, projectId), id);
    expect(v?.payload.offloaded).toEqual({ uri: offloaded.uri, state: `FOUND (${bytes.length} bytes)` });
    expect(v?.payload.inline).toEqual(JSON.parse(bytes.toString('utf8')));
    expect(v?.payload.inline).toMatchObject(payload);
  });

  test('a dead-lettered document: the dead-letter record, the raw bytes as base64 and as text', async () => {
    const { db, projectId } = firestore.project('reads-doc-dead');
    const dl = testDeadLetterReceiver(db);
    const source = {
      CloudPubSubDeadLetterSourceSubscription: 'fixture-results-push',
      CloudPubSubDeadLetterSourceSubscriptionProject: projectId,
      CloudPubSubDeadLetterSourceDeliveryCount: '7',
    };
    const body = envelope({
      data: Buffer.from('not json {').toString('base64'),
      attributes: { eventType: 'TaskCompleted', ...source },
      messageId: 'dl-reads-1',
    });
    expect((await request(dl.server).post('/').send(body)).status).toBeLessThan(300);
    const [snap] = (await db.collection(INBOX).where('reason', '==', 'DEAD_LETTERED').get()).docs;
    const v = await readDocument(depsFor(db, projectId), snap!.id);
    expect(v?.row).toMatchObject({ status: 'PARKED', reason: 'DEAD_LETTERED' });
    expect(v?.deadLetter).toMatchObject({
      deliveryCount: 7,
      sourceSubscription: `projects/${projectId}/subscriptions/fixture-results-push`,
    });
    expect(v?.stored.rawData).toBe(Buffer.from('not json {').toString('base64'));
    // What the console shows of it: the bytes as received, as text.
    expect(v?.raw).toEqual({ bytes: 10, form: 'DECODED', text: 'not json {', shownBytes: 10, utf8: true });
    expect(v?.explanation.because.join(' ')).toContain('7');
  });
});

describe('readInstance', () => {
  test('a double token: 2 tokens on waitForCompletion, its AMBIGUOUS completion parked, the model XML', async () => {
    const { db, projectId } = firestore.project('reads-twin');
    const instanceId = await waiting(db, 'C-twin');
    await moveToken(db, engine, {
      processInstanceId: instanceId,
      executionId: null,
      activityId: 'waitForCompletion',
      force: true,
      now: new Date(),
    });
    const parkedId = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-twin') });
    await relayOne(relayDeps(db), parkedId);
    const deps = depsFor(db, projectId);
    const v = await readInstance(deps, instanceId);
    expect(v?.overlays.find((o) => o.activityId === 'waitForCompletion')).toMatchObject({ tokens: 2, waiting: 2 });
    expect(v?.parked).toEqual([expect.objectContaining({ id: parkedId, reason: 'AMBIGUOUS_CORRELATION' })]);
    expect(v?.model?.xml).toContain('id="waitForCompletion"');
    expect(v?.incidents.some((i) => i.reason === 'DUPLICATE_WAITING_POINT' && i.resolvedAt === null)).toBe(true);
    expect(v?.repairs.map((r) => r.kind)).toEqual(['move-token']);
    expect(await instancesByBusinessKey(deps, 'C-twin')).toEqual([
      expect.objectContaining({ id: instanceId, activeTokens: 2 }),
    ]);
    expect(await readInstance(deps, 'no-such-instance')).toBeNull();
  });

  test('rows read with the field mask (list, audit trail, parked) are the rows of the whole document', async () => {
    const { db, projectId } = firestore.project('reads-mask');
    const instanceId = await waiting(db, 'C-mask');
    // Every field a row shows set, lastError and validationError apart (a row prefers lastError), and a payload the mask leaves behind.
    const id = 'mask-1';
    await db
      .collection(INBOX)
      .doc(id)
      .set({
        status: 'PARKED',
        reason: 'INVALID_PAYLOAD',
        messageName: 'TaskCompleted',
        correlationKey: 'C-mask',
        attempts: 3,
        receivedAt: new Date(Date.now() - DAY),
        lastError: 'last',
        validationError: 'invalid',
        payload: { blob: 'x'.repeat(100_000) },
        shard: 0,
      });
    await refs.instance(db, instanceId).update({ correlatedMessages: [id] });
    const whole = rowOf(view(await db.collection(INBOX).doc(id).get()));
    expect(whole).toMatchObject({ attempts: 3, error: 'last', receivedAt: expect.any(String) as unknown });
    const deps = depsFor(db, projectId);
    expect((await listDocuments(deps, { correlationKey: 'C-mask' }, { limit: 10, after: null })).documents).toEqual([
      whole,
    ]);
    expect(
      (await listDocuments(deps, { correlationKey: 'C-mask', olderThanMs: 3_600_000 }, { limit: 10, after: null }))
        .documents,
    ).toEqual([whole]);
    const v = await readInstance(deps, instanceId);
    expect(v?.audit).toEqual([{ inboxId: id, row: whole }]);
    expect(v?.parked).toEqual([whole]);
  });

  test('an audit trail of 100 entries, one of them purged (timed, printed)', async () => {
    const { db, projectId } = firestore.project('reads-audit');
    const instanceId = await waiting(db, 'C-audit');
    const ids = await seedParked(db, 'a', 100);
    await db.collection(INBOX).doc(ids[42]!).delete();
    await refs.instance(db, instanceId).update({ correlatedMessages: ids });
    const deps = depsFor(db, projectId);
    await readInstance(deps, instanceId);
    const t0 = performance.now();
    const v = await readInstance(deps, instanceId);
    process.stdout.write(`readInstance with 100 audit entries: ${(performance.now() - t0).toFixed(0)} ms\n`);
    expect(v?.audit.map((a) => a.inboxId)).toEqual(ids);
    expect(v?.audit[42]?.row).toBeNull();
    expect(v?.audit[41]?.row).toMatchObject({ id: ids[41], status: 'PARKED' });
    expect(v?.audit.filter((a) => a.row === null)).toHaveLength(1);
  });
});
