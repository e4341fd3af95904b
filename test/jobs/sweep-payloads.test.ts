import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import request from 'supertest';
import type { Engine } from '../../functions/src/engine/engine';
import { refs } from '../../functions/src/engine/store/collections';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { moveToken } from '../../functions/src/engine/store/move-token';
import { resolveIncident } from '../../functions/src/engine/store/resolve-incident';
import type { JobState } from '../../functions/src/engine/state';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { processedRef } from '../../functions/src/inbox/processed';
import { type AsyncHandler, PermanentJobError } from '../../functions/src/jobs/handlers';
import { createRunJobHandler } from '../../functions/src/jobs/run-job';
import { createSweepJobsHandler } from '../../functions/src/jobs/sweep-jobs';
import { sweepPayloads } from '../../functions/src/jobs/sweep-payloads';
import { createLogger } from '../../functions/src/log';
import { relayOne, type RelayDeps } from '../../functions/src/relay/relay-one';
import { createGcsPayloadStore, type StoragePolicy } from '../../functions/src/storage/gcs-payload-store';
import type { PayloadStore } from '../../functions/src/storage/payload-store';
import { lineItems, storeOffloaded } from '../support/claims';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload } from '../support/inbox';
import { jobsOf, tokensOf } from '../support/process-state';
import { useTestStorage } from '../support/storage';
import { appHandlers, fixtureApp, settlementRef } from '../support/app';

/**
 * The payload sweep (issue 17, decision 5): DONE documents of offloaded
 * payloads past payloadExpireAt lose their object first, then themselves;
 * PARKED ones are never touched; a storage failure leaves the document for
 * the next call. Real Firestore and storage emulators.
 */
const BUCKET = 'inbox-payloads-sweep';
const storage = useTestStorage([BUCKET]);
const dbs = freshFirestores();
const MINUTE = 60_000;
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
let engine: Engine;
let store: PayloadStore;

beforeAll(async () => {
  engine = await fixtureEngine();
  store = createGcsPayloadStore('sweep-payloads', FAST);
});
afterEach(() => storage.current.emulator.faults.clear());

const objectNames = (): string[] => storage.current.emulator.objects(BUCKET).map((o) => o.name);

/**
 * An offloaded completion in `db`: DONE (retention one minute) when a token waits for it, PARKED when `park`.
 * DONE: its instance is COMPLETED ("Settle" done), unless `settlement: 'PENDING'` leaves that job to the test.
 */
async function offloadedDoc(
  db: FirebaseFirestore.Firestore,
  caseId: string,
  outcome: 'DONE' | 'PARKED',
  settlement: 'DONE' | 'PENDING' = 'DONE',
): Promise<{ id: string; object: string; instanceId: string | null }> {
  let instanceId: string | null = null;
  if (outcome === 'DONE') {
    const started = await startProcessInstance(db, engine, {
      processKey: 'fixture-process',
      businessKey: caseId,
      variables: { caseId },
      now: new Date(),
    });
    await completeJobRun(db, engine, started.jobs[0]!, {}, new Date());
    instanceId = started.instance.id;
  }
  const { id, offloaded } = await storeOffloaded(
    db,
    store,
    BUCKET,
    completionPayload(caseId, { lineItems: lineItems(20) }),
  );
  // DONE: correlated with a one-minute retention. PARKED: nobody waits, and the buffer window has passed.
  const deps: RelayDeps = {
    db,
    engine,
    policy: {
      backoffBaseMs: 1_000,
      backoffCapMs: 1_000,
      bufferWindowMs: outcome === 'DONE' ? 86_400_000 : 0,
      errorAfterAttempts: 3,
    },
    retentionMs: MINUTE,
    transactionTimeoutMs: 10_000,
    now: () => new Date(),
    random: () => 0.5,
  };
  expect(await relayOne(deps, id)).toMatchObject({
    kind: 'DECIDED',
    decision: { kind: outcome === 'DONE' ? 'DONE' : 'PARK' },
  });
  if (instanceId !== null && settlement === 'DONE') {
    await completeJobRun(db, engine, await settlementJob(db, instanceId), {}, new Date());
    expect(await statusOf(db, instanceId)).toBe('COMPLETED');
  }
  return { id, object: offloaded.object, instanceId };
}

/** The PENDING "Settle" job of an instance. */
async function settlementJob(db: FirebaseFirestore.Firestore, instanceId: string): Promise<JobState> {
  const job = (await jobsOf(db, instanceId)).find((j) => j.activityId === 'settle' && j.status === 'PENDING');
  if (job === undefined) throw new Error(`no PENDING settle job in ${instanceId}`);
  return job;
}
const statusOf = async (db: FirebaseFirestore.Firestore, instanceId: string): Promise<unknown> =>
  (await refs.instance(db, instanceId).get()).get('status');
const expiryOf = async (db: FirebaseFirestore.Firestore, id: string): Promise<Date> =>
  ((await db.collection(INBOX).doc(id).get()).get('payloadExpireAt') as FirebaseFirestore.Timestamp).toDate();

/** runJob, in process, with `handlers`: runs one job as its Cloud Task would (its answer's body). */
let served = 0;
async function runJobNow(
  db: FirebaseFirestore.Firestore,
  job: JobState,
  handlers: Readonly<Record<string, AsyncHandler>>,
): Promise<Record<string, unknown>> {
  const queue = { enqueue: async (): Promise<'CREATED'> => 'CREATED' };
  const name = `sweepPayloadsRunJob${++served}`;
  http(
    name,
    createRunJobHandler({
      db: () => db,
      engine: async () => engine,
      queue: () => queue,
      timerQueue: () => queue,
      handlers: () => handlers,
      verifier: null,
      log,
      now: () => new Date(),
      maxAttempts: 3,
      queueMaxAttempts: 5,
    }),
  );
  return (
    await request(getTestServer(name)).post('/').send({ jobId: job.id, processInstanceId: job.processInstanceId })
  ).body as Record<string, unknown>;
}

describe('the payload sweep', () => {
  test('past payloadExpireAt: object, then document, deleted; the processed record stays; PARKED and not yet expired are untouched', async () => {
    const db = dbs('sweep-payloads');
    const done = await offloadedDoc(db, 'C-sweep-done', 'DONE');
    const parked = await offloadedDoc(db, 'C-sweep-parked', 'PARKED');
    expect((await db.collection(INBOX).doc(parked.id).get()).get('status')).toBe('PARKED');
    expect(objectNames()).toEqual(expect.arrayContaining([done.object, parked.object]));

    // Before payloadExpireAt: nothing.
    expect(await sweepPayloads({ db, store: () => store, log, now: new Date() })).toMatchObject({
      deleted: 0,
      kept: 0,
      failures: 0,
    });
    expect((await db.collection(INBOX).doc(done.id).get()).exists).toBe(true);

    // A year later: the DONE one goes, object first; the PARKED one and its object stay.
    const later = new Date(Date.now() + 365 * 86_400_000);
    logs.length = 0;
    expect(await sweepPayloads({ db, store: () => store, log, now: later })).toEqual({
      deleted: 1,
      objectAbsent: 0,
      kept: 0,
      keptForInstance: 0,
      failures: 0,
      queryReads: 1,
    });
    expect((await db.collection(INBOX).doc(done.id).get()).exists).toBe(false);
    expect(objectNames()).not.toContain(done.object);
    expect((await processedRef(db, done.id).get()).exists).toBe(true);
    expect((await db.collection(INBOX).doc(parked.id).get()).exists).toBe(true);
    expect(objectNames()).toContain(parked.object);
    expect(logs).toContainEqual(
      expect.objectContaining({
        severity: 'INFO',
        message: 'payload sweep',
        payloadSweep: expect.objectContaining({ deleted: 1, kept: 0, failures: 0 }),
      }),
    );
  });

  test('storage failing: the document is kept (its object was not deleted), counted as a failure; the next sweep finishes it', async () => {
    const db = dbs('sweep-payloads-outage');
    const done = await offloadedDoc(db, 'C-sweep-outage', 'DONE');
    const later = new Date(Date.now() + 2 * MINUTE);
    storage.current.emulator.faults.failNext(1_000, 503, (r) => r.op === 'delete');
    logs.length = 0;
    expect(await sweepPayloads({ db, store: () => store, log, now: later })).toMatchObject({ deleted: 0, failures: 1 });
    expect((await db.collection(INBOX).doc(done.id).get()).exists).toBe(true);
    expect(objectNames()).toContain(done.object);
    const postponedTo = new Date(later.getTime() + 3_600_000);
    expect(logs).toContainEqual(
      expect.objectContaining({
        severity: 'WARNING',
        message: 'offloaded payload not swept; postponed so the rest of the queue proceeds',
        inboxId: done.id,
        error: expect.stringContaining('503'),
        payloadExpireAt: postponedTo.toISOString(),
      }),
    );
    expect(
      ((await db.collection(INBOX).doc(done.id).get()).get('payloadExpireAt') as FirebaseFirestore.Timestamp).toDate(),
    ).toEqual(postponedTo);
    storage.current.emulator.faults.clear();
    // Moved back an hour: not due again before then; then swept.
    expect(await sweepPayloads({ db, store: () => store, log, now: later })).toMatchObject({
      deleted: 0,
      failures: 0,
      queryReads: 1,
    });
    expect(await sweepPayloads({ db, store: () => store, log, now: postponedTo })).toMatchObject({
      deleted: 1,
      failures: 0,
    });
    expect((await db.collection(INBOX).doc(done.id).get()).exists).toBe(false);
  });

  test('a document that fails every time (its bucket refuses: gone since INBOX_PAYLOAD_BUCKET changed) is moved back; the ones behind it are swept', async () => {
    const db = dbs('sweep-payloads-stuck');
    const stuck = await offloadedDoc(db, 'C-sweep-stuck', 'DONE');
    const behind = await offloadedDoc(db, 'C-sweep-behind', 'DONE');
    // The oldest due document points to a bucket that no longer exists (an earlier payload bucket).
    const stuckRef = db.collection(INBOX).doc(stuck.id);
    await stuckRef.update({
      'offloaded.bucket': 'old-inbox-payloads',
      payloadExpireAt: new Date(Date.now() - 86_400_000),
    });
    const later = new Date(Date.now() + 2 * MINUTE);
    logs.length = 0;
    // A page of one: without the postponement, the stuck document would be that page on every call.
    expect(await sweepPayloads({ db, store: () => store, log, now: later }, { pageSize: 1 })).toMatchObject({
      deleted: 0,
      failures: 1,
    });
    expect(logs).toContainEqual(
      expect.objectContaining({
        severity: 'ERROR',
        inboxId: stuck.id,
        object: `gs://old-inbox-payloads/${stuck.object}#${String((await stuckRef.get()).get('offloaded.generation'))}`,
        error: expect.stringContaining('the bucket does not exist'),
      }),
    );
    expect(await sweepPayloads({ db, store: () => store, log, now: later }, { pageSize: 1 })).toMatchObject({
      deleted: 1,
      failures: 0,
    });
    expect((await db.collection(INBOX).doc(behind.id).get()).exists).toBe(false);
    expect(objectNames()).not.toContain(behind.object);
    // The stuck one is kept, with its payloadExpireAt an hour on, tried again then.
    expect(((await stuckRef.get()).get('payloadExpireAt') as FirebaseFirestore.Timestamp).toDate()).toEqual(
      new Date(later.getTime() + 3_600_000),
    );
    expect(objectNames()).toContain(stuck.object);
  });

  test('an object deleted by hand already: the document still goes (ABSENT is fine)', async () => {
    const db = dbs('sweep-payloads-absent');
    const done = await offloadedDoc(db, 'C-sweep-absent', 'DONE');
    await storage.current.client.bucket(BUCKET).file(done.object).delete();
    expect(await sweepPayloads({ db, store: () => store, log, now: new Date(Date.now() + 2 * MINUTE) })).toMatchObject({
      deleted: 1,
      objectAbsent: 1,
    });
    expect((await db.collection(INBOX).doc(done.id).get()).exists).toBe(false);
  });

  test('"Settle" failed into an incident: document and object kept past the retention, without blocking the page; the repair reads the report; once COMPLETED, swept', async () => {
    const db = dbs('sweep-payloads-incident');
    const held = await offloadedDoc(db, 'C-sweep-incident', 'DONE', 'PENDING');
    const instanceId = held.instanceId!;
    const behind = await offloadedDoc(db, 'C-sweep-incident-behind', 'DONE');
    // The held one is the oldest due: the page of one is its, until the sweep moves it on.
    await db
      .collection(INBOX)
      .doc(held.id)
      .update({ payloadExpireAt: new Date(Date.now() - 86_400_000) });
    const real = appHandlers(fixtureApp, {
      db: () => db,
      pubsub: () => {
        throw new Error('settle publishes nothing');
      },
      payloadStore: () => store,
    });
    const refused = async (): Promise<never> => {
      throw new PermanentJobError('the settling service refused case C-sweep-incident');
    };
    expect(await runJobNow(db, await settlementJob(db, instanceId), { settle: refused })).toMatchObject({
      outcome: 'failed',
    });
    expect(await statusOf(db, instanceId)).toBe('INCIDENT');

    // A year on, far past INBOX_DONE_RETENTION_DAYS: the instance may still read the report, so both stay.
    const later = new Date(Date.now() + 365 * 86_400_000);
    logs.length = 0;
    expect(await sweepPayloads({ db, store: () => store, log, now: later }, { pageSize: 1 })).toEqual({
      deleted: 0,
      objectAbsent: 0,
      kept: 0,
      keptForInstance: 1,
      failures: 0,
      queryReads: 1,
    });
    expect((await db.collection(INBOX).doc(held.id).get()).exists).toBe(true);
    expect(objectNames()).toContain(held.object);
    expect(logs).toContainEqual(
      expect.objectContaining({
        message: 'payload sweep',
        payloadSweep: expect.objectContaining({ keptForInstance: 1 }),
        keptForInstance: [{ inboxId: held.id, processInstanceId: instanceId, instanceStatus: 'INCIDENT' }],
      }),
    );
    // Moved on an hour: the next page is the one behind it.
    expect(await expiryOf(db, held.id)).toEqual(new Date(later.getTime() + 3_600_000));
    expect(await sweepPayloads({ db, store: () => store, log, now: later }, { pageSize: 1 })).toMatchObject({
      deleted: 1,
      keptForInstance: 0,
    });
    expect((await db.collection(INBOX).doc(behind.id).get()).exists).toBe(false);

    // The runbook's repair: the token back onto "Settle"; the job reads the report by its reference and bills it.
    const [token] = (await tokensOf(db, instanceId)).filter((t) => t.activityId === 'settle');
    await moveToken(db, engine, {
      processInstanceId: instanceId,
      executionId: token!.id,
      activityId: 'settle',
      force: false,
      now: new Date(),
    });
    expect(await runJobNow(db, await settlementJob(db, instanceId), real)).toMatchObject({ outcome: 'completed' });
    expect((await settlementRef(db, 'C-sweep-incident').get()).data()).toMatchObject({
      billedItems: 20,
      lineItemCount: 20,
    });
    // Still INCIDENT until resolved: kept on the next look.
    const hourOn = new Date(later.getTime() + 3_600_000);
    expect(await sweepPayloads({ db, store: () => store, log, now: hourOn })).toMatchObject({
      deleted: 0,
      keptForInstance: 1,
    });
    await resolveIncident(db, instanceId, 'settled after the repair', new Date());
    expect(await statusOf(db, instanceId)).toBe('COMPLETED');

    // COMPLETED: the next sweep deletes both, object first.
    expect(
      await sweepPayloads({ db, store: () => store, log, now: new Date(hourOn.getTime() + 3_600_000) }),
    ).toMatchObject({ deleted: 1, keptForInstance: 0, failures: 0 });
    expect((await db.collection(INBOX).doc(held.id).get()).exists).toBe(false);
    expect(objectNames()).not.toContain(held.object);
  });

  test('an instance deleted, or COMPLETED: nothing holds the document', async () => {
    const db = dbs('sweep-payloads-gone');
    const gone = await offloadedDoc(db, 'C-sweep-gone', 'DONE', 'PENDING');
    await refs.instance(db, gone.instanceId!).delete();
    expect(await sweepPayloads({ db, store: () => store, log, now: new Date(Date.now() + 2 * MINUTE) })).toMatchObject({
      deleted: 1,
      keptForInstance: 0,
    });
    expect(objectNames()).not.toContain(gone.object);
  });

  test('sweepJobs runs it beside the job and timer sweeps', async () => {
    const db = dbs('sweep-payloads-jobs');
    const done = await offloadedDoc(db, 'C-sweep-jobs', 'DONE');
    const queue = { enqueue: async (): Promise<'CREATED'> => 'CREATED' };
    const later = new Date(Date.now() + 2 * MINUTE);
    http(
      'sweepJobsPayloads',
      createSweepJobsHandler({
        db: () => db,
        engine: async () => engine,
        queue: () => queue,
        timerQueue: () => queue,
        log,
        now: () => later,
        options: {},
        payloadStore: () => store,
      }),
    );
    const res = await request(getTestServer('sweepJobsPayloads')).post('/').send({});
    expect(res.status).toBe(200);
    expect(res.body.payloads).toEqual({
      deleted: 1,
      objectAbsent: 0,
      kept: 0,
      keptForInstance: 0,
      failures: 0,
      queryReads: 1,
    });
    expect((await db.collection(INBOX).doc(done.id).get()).exists).toBe(false);
    expect(objectNames()).not.toContain(done.object);
  });
});
