import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import type { Firestore } from '@google-cloud/firestore';
import { join } from 'node:path';
import request from 'supertest';
import { loadEngine } from '../../functions/src/engine/deployed';
import type { Engine } from '../../functions/src/engine/engine';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';
import { moveToken } from '../../functions/src/engine/store/move-token';
import { resolveIncident } from '../../functions/src/engine/store/resolve-incident';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { MAX_CALL_DEPTH, type JobState } from '../../functions/src/engine/state';
import { INBOX } from '../../functions/src/inbox/document';
import { readInstanceHolds } from '../../functions/src/inbox/instance-hold';
import { type AsyncHandler, PermanentJobError } from '../../functions/src/jobs/handlers';
import { createRunJobHandler } from '../../functions/src/jobs/run-job';
import { sweepPayloads } from '../../functions/src/jobs/sweep-payloads';
import { createLogger } from '../../functions/src/log';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import { relayOne, type RelayDeps } from '../../functions/src/relay/relay-one';
import { createGcsPayloadStore, type StoragePolicy } from '../../functions/src/storage/gcs-payload-store';
import type { PayloadStore } from '../../functions/src/storage/payload-store';
import { appHandlers, fixtureApp, settlementRef } from '../support/app';
import { lineItems, storeOffloaded } from '../support/claims';
import { freshFirestores } from '../support/firestore';
import { completionPayload } from '../support/inbox';
import { jobsOf, tokensOf } from '../support/process-state';
import { useTestStorage } from '../support/storage';

/**
 * The payload sweep's hold follows `calledBy` upwards (inbox/instance-hold.ts):
 * an offloaded completion that went into a called instance (or an item of a
 * multi-instance activity) is handed, by its reference, to the caller when
 * the child ends. The child is COMPLETED then, but its caller may still read
 * the object (its failed step, repaired, runs again): the document and the
 * object are kept while any instance on the way up is not COMPLETED
 * (test/fixtures/bpmn-held/: a caller that collects the report through a
 * called process, or one item per case, then settles it).
 */
const BUCKET = 'inbox-payloads-held';
const storage = useTestStorage([BUCKET]);
const dbs = freshFirestores();
const MINUTE = 60_000;
const HOUR = 3_600_000;
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
  engine = await loadEngine(
    join(__dirname, '..', 'fixtures', 'bpmn-held'),
    {},
    new Set(['settle']),
    inboxBuffer(7 * 86_400_000),
  );
  store = createGcsPayloadStore('sweep-payloads-calls', FAST);
});

const objectNames = (): string[] => storage.current.emulator.objects(BUCKET).map((o) => o.name);
const statusOf = async (db: Firestore, id: string): Promise<unknown> =>
  (await refs.instance(db, id).get()).get('status');
const inboxDoc = (db: Firestore, id: string): FirebaseFirestore.DocumentReference => db.collection(INBOX).doc(id);

/** The offloaded completion of `caseId` stored and correlated (DONE, a minute's retention): its id, object and instance. */
async function correlated(
  db: Firestore,
  caseId: string,
): Promise<{ id: string; object: string; processInstanceId: string }> {
  const { id, offloaded } = await storeOffloaded(
    db,
    store,
    BUCKET,
    completionPayload(caseId, { lineItems: lineItems(20) }),
  );
  const deps: RelayDeps = {
    db,
    engine,
    policy: { backoffBaseMs: 1_000, backoffCapMs: 1_000, bufferWindowMs: 86_400_000, errorAfterAttempts: 3 },
    retentionMs: MINUTE,
    transactionTimeoutMs: 10_000,
    now: () => new Date(),
    random: () => 0.5,
  };
  expect(await relayOne(deps, id)).toMatchObject({ kind: 'DECIDED', decision: { kind: 'DONE' } });
  const processInstanceId = (await inboxDoc(db, id).get()).get('processInstanceId') as string;
  return { id, object: offloaded.object, processInstanceId };
}

/** The instances `callerId` started (its called instances or items). */
const calledBy = async (db: Firestore, callerId: string): Promise<string[]> =>
  (await db.collection(COLLECTIONS.instances).where('calledBy.instanceId', '==', callerId).get()).docs.map((d) => d.id);

/** The PENDING "Settle" job of an instance. */
async function settlementJob(db: Firestore, instanceId: string): Promise<JobState> {
  const job = (await jobsOf(db, instanceId)).find((j) => j.activityId === 'settle' && j.status === 'PENDING');
  if (job === undefined) throw new Error(`no PENDING settle job in ${instanceId}`);
  return job;
}

/** runJob, in process, with `handlers`: runs one job as its Cloud Task would (its answer's body). */
let served = 0;
async function runJobNow(
  db: Firestore,
  job: JobState,
  handlers: Readonly<Record<string, AsyncHandler>>,
): Promise<Record<string, unknown>> {
  const queue = { enqueue: async (): Promise<'CREATED'> => 'CREATED' };
  const name = `sweepPayloadsCallsRunJob${++served}`;
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

const refused: AsyncHandler = async () => {
  throw new PermanentJobError('the settling service refused the case');
};

/** "Settle" fails for good: the caller is INCIDENT, its token still on "Settle". */
async function settleFails(db: Firestore, callerId: string): Promise<void> {
  expect(await runJobNow(db, await settlementJob(db, callerId), { settle: refused })).toMatchObject({
    outcome: 'failed',
  });
  expect(await statusOf(db, callerId)).toBe('INCIDENT');
}

/** The runbook's repair: the token back onto "Settle", the step run again with `handler`, the incident resolved. */
async function repaired(db: Firestore, callerId: string, handler: AsyncHandler): Promise<void> {
  const [token] = (await tokensOf(db, callerId)).filter((t) => t.activityId === 'settle');
  await moveToken(db, engine, {
    processInstanceId: callerId,
    executionId: token!.id,
    activityId: 'settle',
    force: false,
    now: new Date(),
  });
  expect(await runJobNow(db, await settlementJob(db, callerId), { settle: handler })).toMatchObject({
    outcome: 'completed',
  });
  await resolveIncident(db, callerId, 'settled after the repair', new Date());
  expect(await statusOf(db, callerId)).toBe('COMPLETED');
}

describe('the hold follows calledBy to the caller', () => {
  test('a completion that went into a called instance: kept while its caller is INCIDENT, its repair reads the report; deleted once the caller completes', async () => {
    const db = dbs('sweep-payloads-called');
    const caller = await startProcessInstance(db, engine, {
      processKey: 'fixture-held-caller',
      businessKey: 'C-called',
      variables: { caseId: 'C-called' },
      now: new Date(),
    });
    const callerId = caller.instance.id;
    const doc = await correlated(db, 'C-called');
    // The completion went into the child, which ended and handed its variables (the reference) to its caller.
    expect(await calledBy(db, callerId)).toEqual([doc.processInstanceId]);
    expect(await statusOf(db, doc.processInstanceId)).toBe('COMPLETED');
    expect((await refs.instance(db, callerId).get()).get('variables.caseReport')).toMatch(/^gs:\/\//);
    await settleFails(db, callerId);

    // A year on: the child is COMPLETED, but its caller may still read the object.
    const later = new Date(Date.now() + 365 * 86_400_000);
    logs.length = 0;
    expect(await sweepPayloads({ db, store: () => store, log, now: later })).toMatchObject({
      deleted: 0,
      keptForInstance: 1,
      failures: 0,
    });
    expect((await inboxDoc(db, doc.id).get()).exists).toBe(true);
    expect(objectNames()).toContain(doc.object);
    expect(logs).toContainEqual(
      expect.objectContaining({
        message: 'payload sweep',
        keptForInstance: [{ inboxId: doc.id, processInstanceId: callerId, instanceStatus: 'INCIDENT' }],
      }),
    );

    // The repair runs "Settle" again: it reads the report by the reference the child handed over.
    const real = appHandlers(fixtureApp, {
      db: () => db,
      pubsub: () => {
        throw new Error('settle publishes nothing');
      },
      payloadStore: () => store,
    });
    await repaired(db, callerId, real.settle!);
    expect((await settlementRef(db, 'C-called').get()).data()).toMatchObject({ billedItems: 20, lineItemCount: 20 });

    // The caller COMPLETED: the next sweep deletes both, object first.
    expect(await sweepPayloads({ db, store: () => store, log, now: new Date(later.getTime() + HOUR) })).toMatchObject({
      deleted: 1,
      keptForInstance: 0,
      failures: 0,
    });
    expect((await inboxDoc(db, doc.id).get()).exists).toBe(false);
    expect(objectNames()).not.toContain(doc.object);
  });

  test('a completion that went into an item of a multi-instance activity: kept while the caller is INCIDENT, deleted once it completes', async () => {
    const db = dbs('sweep-payloads-item');
    const caller = await startProcessInstance(db, engine, {
      processKey: 'fixture-held-items',
      businessKey: 'C-items',
      variables: { caseIds: ['C-item'] },
      now: new Date(),
    });
    const callerId = caller.instance.id;
    const doc = await correlated(db, 'C-item');
    // The completion went into the item, which ended and handed its output (the reference) to its caller.
    expect(await calledBy(db, callerId)).toEqual([doc.processInstanceId]);
    expect(await statusOf(db, doc.processInstanceId)).toBe('COMPLETED');
    expect((await refs.instance(db, callerId).get()).get('variables.reports')).toEqual([
      expect.stringMatching(/^gs:\/\//),
    ]);
    await settleFails(db, callerId);

    const later = new Date(Date.now() + 365 * 86_400_000);
    logs.length = 0;
    expect(await sweepPayloads({ db, store: () => store, log, now: later })).toMatchObject({
      deleted: 0,
      keptForInstance: 1,
    });
    expect((await inboxDoc(db, doc.id).get()).exists).toBe(true);
    expect(objectNames()).toContain(doc.object);
    expect(logs).toContainEqual(
      expect.objectContaining({
        keptForInstance: [{ inboxId: doc.id, processInstanceId: callerId, instanceStatus: 'INCIDENT' }],
      }),
    );

    await repaired(db, callerId, async () => ({}));
    expect(await sweepPayloads({ db, store: () => store, log, now: new Date(later.getTime() + HOUR) })).toMatchObject({
      deleted: 1,
      keptForInstance: 0,
    });
    expect((await inboxDoc(db, doc.id).get()).exists).toBe(false);
    expect(objectNames()).not.toContain(doc.object);
  });
});

describe('readInstanceHolds up a chain of stored instances', () => {
  /** A DONE offloaded document's fields that went into `processInstanceId`. */
  const doneInto = (processInstanceId: string): Record<string, unknown> => ({
    status: 'DONE',
    offloaded: { bucket: BUCKET, object: `payloads/${processInstanceId}.json`, generation: '1' },
    processInstanceId,
  });
  /** Writes instance `id` with `status`, called by `caller` when given. */
  const instance = (db: Firestore, id: string, status: string, caller?: string): Promise<unknown> =>
    refs.instance(db, id).set({ status, ...(caller === undefined ? {} : { calledBy: { instanceId: caller } }) });

  test('the nearest instance on the way up that is not COMPLETED holds; none: nothing holds', async () => {
    const db = dbs('instance-hold-chain');
    await instance(db, 'top', 'INCIDENT');
    await instance(db, 'middle', 'COMPLETED', 'top');
    await instance(db, 'bottom', 'COMPLETED', 'middle');
    await instance(db, 'done-top', 'COMPLETED');
    await instance(db, 'done-child', 'COMPLETED', 'done-top');
    await instance(db, 'orphan', 'COMPLETED', 'deleted-caller');
    await instance(db, 'running', 'RUNNING', 'top');
    const holds = await readInstanceHolds(db, [
      { id: 'a', data: doneInto('bottom') },
      { id: 'b', data: doneInto('done-child') },
      { id: 'c', data: doneInto('orphan') },
      { id: 'd', data: doneInto('running') },
    ]);
    expect(Object.fromEntries(holds)).toEqual({
      a: { processInstanceId: 'top', instanceStatus: 'INCIDENT' },
      d: { processInstanceId: 'running', instanceStatus: 'RUNNING' },
    });
  });

  test('callers that never end (a cycle no call makes) are followed MAX_CALL_DEPTH levels, then hold', async () => {
    const db = dbs('instance-hold-cycle');
    await instance(db, 'one', 'COMPLETED', 'two');
    await instance(db, 'two', 'COMPLETED', 'one');
    const holds = await readInstanceHolds(db, [{ id: 'a', data: doneInto('one') }]);
    expect(holds.get('a')).toEqual({
      processInstanceId: MAX_CALL_DEPTH % 2 === 0 ? 'two' : 'one',
      instanceStatus: expect.stringContaining(`deeper than ${MAX_CALL_DEPTH} levels`),
    });
  });
});
