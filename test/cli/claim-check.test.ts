import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scanOrphanPayloads } from '../../functions/src/cli/orphan-payloads-command';
import type { Engine } from '../../functions/src/engine/engine';
import { instanceId } from '../../functions/src/engine/ids';
import type { JobState } from '../../functions/src/engine/state';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { recordJobFailure } from '../../functions/src/engine/store/record-job-failure';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { offloadObjectName } from '../../functions/src/inbox/claim-check';
import { INBOX } from '../../functions/src/inbox/document';
import { storeMessage } from '../../functions/src/inbox/store-message';
import { parsePushEnvelope } from '../../functions/src/receiver/envelope';
import { interpretMessage } from '../../functions/src/receiver/interpret';
import { relayOne, type RelayDeps } from '../../functions/src/relay/relay-one';
import { createGcsPayloadStore } from '../../functions/src/storage/gcs-payload-store';
import type { PayloadStore } from '../../functions/src/storage/payload-store';
import { lineItems, reportReference, storeOffloaded, storeReferenced, uploadReport } from '../support/claims';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed, TEST_REGISTRY } from '../support/inbox';
import { jobsOf, tokensOf } from '../support/process-state';
import { useTestStorage } from '../support/storage';
import type { Explanation } from '../../functions/src/operations/explain-model';
import { cliFor } from './run-cli';

/**
 * The operator's side of claim checks (issue 17): show (an offloaded payload
 * fetched and shown, a reference stat'ed, --raw writing the exact bytes),
 * requeue of parked claim documents, purge of offloaded DONE documents, and
 * repair orphan-payloads. Real Firestore and storage emulators, the CLI in
 * process with the configuration an operator has.
 */
const PAYLOADS = 'inbox-payloads-cli';
const REPORTS = 'sender-reports-cli';
const storage = useTestStorage([PAYLOADS, REPORTS]);
const firestore = freshFirestores();
const { db, projectId } = firestore.project('cli-claims');
const purgeProject = firestore.project('cli-claims-purge');
const env = { INBOX_PAYLOAD_BUCKET: PAYLOADS };
const cli = cliFor(projectId, undefined, env);
const DAY = 86_400_000;
const dir = mkdtempSync(join(tmpdir(), 'inbox-show-'));
let engine: Engine;
let store: PayloadStore;

beforeAll(async () => {
  engine = await fixtureEngine();
  store = createGcsPayloadStore(projectId);
});

const relayDeps = (d: FirebaseFirestore.Firestore, at: Date, bufferWindowMs = DAY): RelayDeps => ({
  db: d,
  engine,
  policy: { backoffBaseMs: 1_000, backoffCapMs: 1_000, bufferWindowMs, errorAfterAttempts: 3 },
  retentionMs: 7 * DAY,
  transactionTimeoutMs: 10_000,
  now: () => at,
  random: () => 0.5,
  payloadStore: () => store,
});
async function waiting(d: FirebaseFirestore.Firestore, caseId: string, at = new Date()): Promise<void> {
  const started = await startProcessInstance(d, engine, {
    processKey: 'fixture-process',
    businessKey: caseId,
    variables: { caseId },
    now: at,
  });
  await completeJobRun(d, engine, started.jobs[0]!, {}, at);
}
const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
type Shown = {
  claims: {
    offloaded: { state: string; payload: Record<string, unknown>; preview: boolean } | null;
    reference: { state: string; uri: string; liveGeneration?: string } | null;
  };
};

describe('inbox show', () => {
  test("an offloaded payload: fetched pinned and previewed; --raw writes exactly the object's bytes", async () => {
    const { id, bytes, offloaded } = await storeOffloaded(
      db,
      store,
      PAYLOADS,
      completionPayload('C-show-off', { lineItems: lineItems(3_000, 200) }),
    );
    const file = join(dir, 'offloaded.json');
    const r = await cli('show', id, '--raw', file);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(readFileSync(file).equals(bytes)).toBe(true);
    expect(r.out).toContain(
      `wrote ${bytes.length} bytes (the offloaded object) to ${file}; SHA-256 matches payloadHash`,
    );
    expect(r.out).toContain(`${offloaded.uri}: FOUND (${bytes.length} bytes)`);
    expect(r.out).toContain('first 3 items of each list');
    const shown = (await cli('--json', 'show', id)).json() as Shown;
    expect(shown.claims.offloaded).toMatchObject({
      state: 'FOUND',
      preview: true,
      payload: { caseId: 'C-show-off', completedItems: 5 },
    });
    expect((shown.claims.offloaded?.payload.lineItems as unknown[]).at(-1)).toBe('… 2997 more of 3000');
  });

  test('an inline payload: --raw writes its canonical JSON, whose SHA-256 is payloadHash', async () => {
    const id = await storePushed(db, {
      name: 'TaskCompleted',
      payload: completionPayload('C-show-inline', { completedItems: 3 }),
    });
    const file = join(dir, 'inline.json');
    const r = await cli('show', id, '--raw', file);
    expect(r.code).toBe(0);
    expect(sha256(readFileSync(file))).toBe((await db.collection(INBOX).doc(id).get()).get('payloadHash'));
    expect(r.out).toContain('(the canonical JSON of the payload)');
  });

  test('an unreadable message kept in rawChunks: --raw writes the raw bytes as received', async () => {
    const raw = randomBytes(600 * 1024);
    const parsed = parsePushEnvelope({
      message: { data: raw.toString('base64'), attributes: { eventType: 'TaskCompleted' }, messageId: randomUUID() },
      subscription: 'projects/test/subscriptions/inbox-push',
    });
    if (!parsed.ok) throw new Error(parsed.error);
    const draft = interpretMessage(parsed.envelope, TEST_REGISTRY, { referenceBuckets: [] });
    const stored = await storeMessage(db, draft, {
      envelope: parsed.envelope,
      now: new Date(),
      shards: 16,
      offload: null,
    });
    expect((await db.collection(INBOX).doc(stored.id).get()).get('rawDataChunks')).toBeGreaterThan(0);
    const file = join(dir, 'raw.bin');
    const r = await cli('show', stored.id, '--raw', file);
    expect(r.code).toBe(0);
    expect(readFileSync(file).equals(raw)).toBe(true);
    expect(r.out).toContain('SHA-256 matches payloadHash');
  });

  test("a sender's reference: FOUND, then CHANGED (with the live generation), then MISSING", async () => {
    const object = 'reports/C-show-ref.json';
    const ref = await uploadReport(store, REPORTS, object, { lineItems: lineItems(2) });
    const id = await storeReferenced(db, completionPayload('C-show-ref'), reportReference(ref));
    const state = async (): Promise<NonNullable<Shown['claims']['reference']>> =>
      ((await cli('--json', 'show', id)).json() as Shown).claims.reference!;
    expect(await state()).toMatchObject({ state: 'FOUND', uri: reportReference(ref).uri });
    await storage.current.client.bucket(REPORTS).file(object).save('{"lineItems":[]}', { resumable: false });
    const [live] = await storage.current.client.bucket(REPORTS).file(object).getMetadata();
    expect(await state()).toMatchObject({ state: 'CHANGED', liveGeneration: String(live.generation) });
    await storage.current.client.bucket(REPORTS).file(object).delete();
    expect(await state()).toMatchObject({ state: 'MISSING' });
    expect((await cli('show', id)).out).toContain('MISSING: no object of that name');
  });
});

describe('inbox requeue of parked claim documents', () => {
  test('REFERENCE_UNAVAILABLE: back to OPEN like any document; once the object is there again, it correlates', async () => {
    await waiting(db, 'C-requeue-ref');
    const object = 'reports/C-requeue-ref.json';
    const ref = await uploadReport(store, REPORTS, object, { lineItems: lineItems(4) });
    const id = await storeReferenced(db, completionPayload('C-requeue-ref'), reportReference(ref));
    storage.current.emulator.faults.failNext(
      1,
      404,
      (r) => r.op === 'stat' && r.object === object && r.query.generation !== undefined,
    );
    // Unavailable when the relay looks (404 for the pinned stat, and for the live one: what a deleted object answers),
    // then back: what an operator restoring the generation from soft delete achieves.
    storage.current.emulator.faults.failNext(1, 404, (r) => r.op === 'stat' && r.object === object);
    expect(await relayOne(relayDeps(db, new Date()), id)).toMatchObject({
      kind: 'DECIDED',
      decision: { kind: 'PARK', reason: 'REFERENCE_UNAVAILABLE' },
    });
    const r = await cli('requeue', id);
    expect(r.code).toBe(0);
    expect((await db.collection(INBOX).doc(id).get()).data()).toMatchObject({
      status: 'OPEN',
      reason: null,
      attempts: 0,
      previousReason: 'REFERENCE_UNAVAILABLE',
    });
    expect(await relayOne(relayDeps(db, new Date()), id)).toMatchObject({
      kind: 'DECIDED',
      decision: { kind: 'DONE' },
    });
  });

  test('an offloaded document parked NO_WAITING_INSTANCE: requeued, then correlated with its reference', async () => {
    const { id, offloaded } = await storeOffloaded(
      db,
      store,
      PAYLOADS,
      completionPayload('C-requeue-off', { lineItems: lineItems(3_000, 200) }),
    );
    expect(await relayOne(relayDeps(db, new Date(), 0), id)).toMatchObject({
      kind: 'DECIDED',
      decision: { kind: 'PARK', reason: 'NO_WAITING_INSTANCE' },
    });
    await waiting(db, 'C-requeue-off');
    expect((await cli('requeue', id)).code).toBe(0);
    expect(await relayOne(relayDeps(db, new Date()), id)).toMatchObject({
      kind: 'DECIDED',
      decision: { kind: 'DONE' },
    });
    const doc = (await db.collection(INBOX).doc(id).get()).data() ?? {};
    expect(doc.offloaded).toMatchObject({ uri: offloaded.uri });
    expect(doc.payloadExpireAt).toBeDefined();
    expect(doc.expireAt).toBeUndefined();
  });
});

/** The PENDING "Settle" job of the instance of `caseId`. */
async function settlementJob(d: FirebaseFirestore.Firestore, caseId: string): Promise<JobState> {
  const job = (await jobsOf(d, instanceId('fixture-process', caseId))).find(
    (j) => j.activityId === 'settle' && j.status === 'PENDING',
  );
  if (job === undefined) throw new Error(`no PENDING settle job for ${caseId}`);
  return job;
}

describe('inbox purge of offloaded DONE documents', () => {
  test('the object goes before its document; a dry run counts them', async () => {
    const d = purgeProject.db;
    const at = new Date(Date.now() - 10 * DAY);
    await waiting(d, 'C-purge-off', at);
    const { id, offloaded } = await storeOffloaded(
      d,
      store,
      PAYLOADS,
      completionPayload('C-purge-off', { lineItems: lineItems(5) }),
      at,
    );
    await relayOne(relayDeps(d, new Date(at.getTime() + 60_000)), id);
    expect((await d.collection(INBOX).doc(id).get()).get('status')).toBe('DONE');
    // Settled: the instance COMPLETED, nothing reads the report any more.
    await completeJobRun(d, engine, await settlementJob(d, 'C-purge-off'), {}, new Date(at.getTime() + 120_000));
    const purge = cliFor(purgeProject.projectId, undefined, env);
    const dry = await purge('--json', 'purge', '--done-before', '7d', '--dry-run');
    expect(dry.json()).toMatchObject({ wouldDelete: 1, offloaded: 1 });
    const r = await purge('--json', 'purge', '--done-before', '7d', '--yes');
    expect(r.err).toBe('');
    expect(r.json()).toMatchObject({ deleted: 1, objectsDeleted: 1, offloaded: 1 });
    expect((await d.collection(INBOX).doc(id).get()).exists).toBe(false);
    expect(storage.current.emulator.objects(PAYLOADS).map((o) => o.name)).not.toContain(offloaded.object);
  });
});

describe('inbox purge of an offloaded completion whose instance is in INCIDENT', () => {
  const held = firestore.project('cli-claims-purge-held');
  const purge = cliFor(held.projectId, undefined, env);

  test('kept with its object, said so by purge, show and explain; once the instance COMPLETED, purged', async () => {
    const d = held.db;
    const at = new Date(Date.now() - 10 * DAY);
    await waiting(d, 'C-purge-held', at);
    const { id, offloaded } = await storeOffloaded(
      d,
      store,
      PAYLOADS,
      completionPayload('C-purge-held', { lineItems: lineItems(5) }),
      at,
    );
    await relayOne(relayDeps(d, new Date(at.getTime() + 60_000)), id);
    const instance = instanceId('fixture-process', 'C-purge-held');
    // "Settle" failed for good: the instance is in INCIDENT, and the runbook's repair re-runs the step, which reads the report.
    expect(
      await recordJobFailure(
        d,
        await settlementJob(d, 'C-purge-held'),
        'the settling service refused it',
        10,
        new Date(at.getTime() + 120_000),
        { final: true },
      ),
    ).toMatchObject({ status: 'FAILED' });
    const names = (): string[] => storage.current.emulator.objects(PAYLOADS).map((o) => o.name);

    const dry = await purge('--json', 'purge', '--done-before', '7d', '--dry-run');
    expect(dry.json()).toMatchObject({
      wouldDelete: 0,
      offloaded: 1,
      keptForInstance: 1,
      kept: [{ inboxId: id, processInstanceId: instance, instanceStatus: 'INCIDENT' }],
    });
    const r = await purge('purge', '--done-before', '7d', '--yes');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain(
      `kept ${id} and its payload object: instance ${instance} is INCIDENT and may still read it`,
    );
    expect(r.out).toContain('deleted 0 of 1 DONE documents');
    expect((await d.collection(INBOX).doc(id).get()).exists).toBe(true);
    expect(names()).toContain(offloaded.object);

    const explained = (await purge('--json', 'explain', id)).json() as Explanation;
    expect(explained.because).toContainEqual(
      expect.stringContaining(`not before instance ${instance} has completed (now INCIDENT)`),
    );
    expect((await purge('--json', 'show', id)).json()).toMatchObject({
      keptForInstance: { processInstanceId: instance, instanceStatus: 'INCIDENT' },
    });
    expect((await purge('show', id)).out).toContain(`not while instance ${instance} is INCIDENT`);

    // The operator settles it without the step (cancel the token, resolve): COMPLETED, and the next purge deletes both.
    const [token] = await tokensOf(d, instance);
    expect((await purge('repair', 'cancel-token', '--instance', instance, '--execution', token!.id)).code).toBe(0);
    expect((await purge('repair', 'resolve-incident', instance)).code).toBe(0);
    const after = await purge('--json', 'purge', '--done-before', '7d', '--yes');
    expect(after.json()).toMatchObject({ deleted: 1, objectsDeleted: 1, keptForInstance: 0 });
    expect((await d.collection(INBOX).doc(id).get()).exists).toBe(false);
    expect(names()).not.toContain(offloaded.object);
  });
});

describe('inbox repair orphan-payloads', () => {
  test('lists (dry run) and deletes objects no document points to; young objects and referenced ones stay', async () => {
    const orphaned = await storeOffloaded(
      db,
      store,
      PAYLOADS,
      completionPayload('C-orphan-gone', { lineItems: lineItems(2) }),
    );
    await db.collection(INBOX).doc(orphaned.id).delete(); // deleted by hand: its object is left behind
    const kept = await storeOffloaded(
      db,
      store,
      PAYLOADS,
      completionPayload('C-orphan-kept', { lineItems: lineItems(2) }),
    );
    // An object named after a document that points to another one (a leftover of another payload of it).
    const stray = offloadObjectName(kept.id, 'f'.repeat(64));
    await store.createIfAbsent(PAYLOADS, stray, Buffer.from('{}'), 'application/json');
    // A KEY_COLLISION's second payload: its object is named after the first id, its document has another.
    const second = await storeOffloaded(
      db,
      store,
      PAYLOADS,
      completionPayload('C-orphan-second', { lineItems: lineItems(2) }),
    );
    const otherId = 'c'.repeat(40);
    await db
      .collection(INBOX)
      .doc(otherId)
      .set({ ...(await db.collection(INBOX).doc(second.id).get()).data() });
    await db.collection(INBOX).doc(second.id).delete();

    // A dead letter kept in chunks that a requeue is offloading: its object exists, its document has no `offloaded` yet.
    const chunkedId = 'd'.repeat(40);
    const adopting = offloadObjectName(chunkedId, 'e'.repeat(64));
    await db
      .collection(INBOX)
      .doc(chunkedId)
      .set({ status: 'PARKED', reason: 'DEAD_LETTERED', rawDataChunks: 2, payloadHash: 'e'.repeat(64) });
    await store.createIfAbsent(PAYLOADS, adopting, Buffer.from('{}'), 'application/json');

    // Every object is minutes old: the CLI leaves them all alone.
    const young = await cli('--json', 'repair', 'orphan-payloads');
    expect(young.err).toBe('');
    expect(young.json()).toMatchObject({ orphans: [], dryRun: false, minAgeMs: 32 * DAY });
    expect((young.json() as { young: number }).young).toBeGreaterThanOrEqual(5);
    expect((await cli('repair', 'orphan-payloads', '--dry-run')).out).toContain('younger than 32 d left alone');
    expect((await cli('repair', 'orphan-payloads', '--dry-run', '--older-than', '2h')).out).toContain(
      'younger than 2 h left alone',
    );
    const names = (): string[] => storage.current.emulator.objects(PAYLOADS).map((o) => o.name);
    expect(names()).toEqual(expect.arrayContaining([orphaned.offloaded.object, stray, adopting]));

    // A day on: still within Pub/Sub's retention, so a redelivery may still adopt any of them: nothing is touched by default.
    const dayOn = await scanOrphanPayloads(db, store, PAYLOADS, new Date(Date.now() + DAY), true);
    expect(dayOn.orphans).toEqual([]);
    expect(dayOn.young).toBe(dayOn.listed);
    // With a lower minimum (--older-than 2h) a day is enough; the chunked document's object is still left alone.
    const lowered = await scanOrphanPayloads(db, store, PAYLOADS, new Date(Date.now() + DAY), true, 2 * 3_600_000);
    expect(lowered.orphans.map((o) => o.object)).toEqual(expect.arrayContaining([orphaned.offloaded.object, stray]));
    expect(lowered.requeuePending).toBe(1);
    expect(lowered.orphans.map((o) => o.object)).not.toContain(adopting);

    // 33 days on, past any delivery: the dry run lists the two orphans and deletes nothing; the real run deletes them.
    const later = new Date(Date.now() + 33 * DAY);
    const dry = await scanOrphanPayloads(db, store, PAYLOADS, later, true);
    const found = dry.orphans.map((o) => [o.object, o.why, o.outcome]);
    expect(found).toEqual(
      expect.arrayContaining([
        [orphaned.offloaded.object, 'DOCUMENT_MISSING', null],
        [stray, 'POINTS_ELSEWHERE', null],
      ]),
    );
    expect(found.map(([o]) => o)).not.toEqual(expect.arrayContaining([kept.offloaded.object]));
    expect(found.map(([o]) => o)).not.toEqual(expect.arrayContaining([second.offloaded.object]));
    expect(names()).toEqual(expect.arrayContaining([orphaned.offloaded.object, stray]));
    const real = await scanOrphanPayloads(db, store, PAYLOADS, later, false);
    expect(real.orphans.map((o) => [o.object, o.outcome])).toEqual(
      expect.arrayContaining([
        [orphaned.offloaded.object, 'DELETED'],
        [stray, 'DELETED'],
      ]),
    );
    expect(names()).not.toEqual(expect.arrayContaining([orphaned.offloaded.object]));
    expect(names()).not.toEqual(expect.arrayContaining([stray]));
    expect(names()).toEqual(expect.arrayContaining([kept.offloaded.object, second.offloaded.object, adopting]));
    expect(real.requeuePending).toBe(1);
  });

  test.each(['30m', '59m', '0h', 'soon'])(
    '--older-than %s is refused (a duration of at least 1h), nothing listed',
    async (value) => {
      storage.current.emulator.clearRequests();
      const run = await cli('repair', 'orphan-payloads', '--older-than', value);
      expect(run.code).not.toBe(0);
      expect(run.err).toContain('--older-than');
      expect(storage.current.emulator.requests().filter((r) => r.op === 'list')).toEqual([]);
    },
  );
});
