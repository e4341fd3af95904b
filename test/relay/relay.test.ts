import type { Firestore } from '@google-cloud/firestore';
import type { Engine } from '../../functions/src/engine/engine';
import { refs } from '../../functions/src/engine/store/collections';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { moveToken } from '../../functions/src/engine/store/move-token';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { createLogger } from '../../functions/src/log';
import type { RelayPolicy } from '../../functions/src/relay/decide';
import { relayBatch } from '../../functions/src/relay/relay-batch';
import { relayOne, type RelayDeps } from '../../functions/src/relay/relay-one';
import { startTcpProxy, type TcpProxy } from '../../tools/faults/tcp-proxy';
import { failingEngine, roundsEngine, fixtureEngine } from '../support/engine';
import { freshFirestores, uniqueProjectId } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';
import { waitFor } from '../support/wait';
import { waitingPointsOf } from '../support/waiting';

const policy: RelayPolicy = {
  backoffBaseMs: 60_000,
  backoffCapMs: 600_000,
  bufferWindowMs: 24 * 3_600_000,
  errorAfterAttempts: 3,
};
const WEEK = 7 * 24 * 3_600_000;
const firestore = freshFirestores();
const projectId = uniqueProjectId('relay');
let proxy: TcpProxy;
let db: Firestore;
let engine: Engine;
const logs: Array<Record<string, unknown>> = [];
const log = createLogger((l) => logs.push(JSON.parse(l) as Record<string, unknown>));
const noQueue = {
  jobs: { enqueue: async (): Promise<'CREATED'> => 'CREATED' },
  timers: { enqueue: async (): Promise<'CREATED'> => 'CREATED' },
};

beforeAll(async () => {
  proxy = await startTcpProxy(process.env.FIRESTORE_EMULATOR_HOST ?? '');
  db = firestore('relay', { host: proxy.host, projectId });
  engine = await fixtureEngine();
});
afterAll(async () => {
  await proxy.close();
});

const deps = (overrides: Partial<RelayDeps> = {}): RelayDeps => ({
  db,
  engine,
  policy,
  retentionMs: WEEK,
  transactionTimeoutMs: 10_000,
  now: () => new Date(),
  random: () => 0.5,
  ...overrides,
});
const inboxDoc = async (id: string): Promise<Record<string, unknown>> =>
  (await db.collection(INBOX).doc(id).get()).data() ?? {};

/** A case whose token waits at "Wait for completion". */
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

describe('relayOne: each class of outcome', () => {
  test('CORRELATED: the document is DONE with expireAt, the process moved, in one transaction', async () => {
    const instanceId = await waiting('C-r-ok');
    const id = await storePushed(db, {
      name: 'TaskCompleted',
      payload: completionPayload('C-r-ok', { completedItems: 8 }),
    });
    const result = await relayOne(deps(), id);
    expect(result).toMatchObject({ kind: 'DECIDED', decision: { kind: 'DONE', processInstanceId: instanceId } });
    if (result.kind !== 'DECIDED') return;
    expect(result.jobs.map((j) => j.activityId)).toEqual(['settle']);
    // Reads: inbox document, key document, instance (its tokens in it). Target for the whole correlation: <= 10 reads + writes,
    // plus the processed record (one write, no read) that keeps a replay a duplicate after the DONE document expired,
    // plus the delete of the wait's completion-deadline timer (one write, no read: its id is on the token).
    expect(result.stats.reads).toBe(3);
    expect(result.stats.reads + result.stats.writes).toBeLessThanOrEqual(12);
    const doc = await inboxDoc(id);
    expect(doc).toMatchObject({ status: 'DONE', processInstanceId: instanceId, correlatedVia: 'RELAY' });
    const expireAt = (doc.expireAt as FirebaseFirestore.Timestamp).toMillis();
    const processedAt = (doc.processedAt as FirebaseFirestore.Timestamp).toMillis();
    expect(expireAt - processedAt).toBe(WEEK);
    expect((await refs.instance(db, instanceId).get()).get('variables.completedItems')).toBe(8);
    // The instance's audit trail names the message that moved it.
    expect((await refs.instance(db, instanceId).get()).get('correlatedMessages')).toEqual([id]);
    expect((await refs.correlationKey(db, 'C-r-ok').get()).exists).toBe(false);
  });

  test('NO_WAITING_INSTANCE inside the buffer window: retried later with backoff, attempts counted', async () => {
    const id = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-r-early') });
    const now = new Date();
    const result = await relayOne(deps({ now: () => now }), id);
    expect(result).toMatchObject({ kind: 'DECIDED', decision: { kind: 'RETRY', attempts: 1 } });
    const doc = await inboxDoc(id);
    expect(doc).toMatchObject({ status: 'OPEN', attempts: 1 });
    expect((doc.nextAttemptAt as FirebaseFirestore.Timestamp).toMillis()).toBeGreaterThanOrEqual(
      now.getTime() + 30_000,
    );
    // Still in its key's lane, so a waiting point that arrives later finds it.
    expect(((await refs.correlationKey(db, 'C-r-early').get()).get('open') as unknown[]).length).toBe(1);
    expect(await relayOne(deps({ now: () => now }), id)).toMatchObject({ kind: 'SKIPPED', why: 'NOT_DUE' });
  });

  test('NO_WAITING_INSTANCE after the buffer window: PARKED with the reason, payload kept, never expires', async () => {
    const id = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-r-late') });
    const later = new Date(Date.now() + 25 * 3_600_000);
    const result = await relayOne(deps({ now: () => later }), id);
    expect(result).toMatchObject({ kind: 'DECIDED', decision: { kind: 'PARK', reason: 'NO_WAITING_INSTANCE' } });
    const doc = await inboxDoc(id);
    expect(doc).toMatchObject({
      status: 'PARKED',
      reason: 'NO_WAITING_INSTANCE',
      attempts: 1,
      payload: completionPayload('C-r-late'),
    });
    expect(doc.expireAt).toBeUndefined();
    expect(String(doc.lastError)).toContain('buffer window');
    expect((await refs.correlationKey(db, 'C-r-late').get()).exists).toBe(false);
    expect(logs.some((l) => l.severity === 'ERROR')).toBe(false); // relayOne itself does not log; the batch does (below)
  });

  test('a double token: PARKED as AMBIGUOUS_CORRELATION at once, with the count and the waiting executions', async () => {
    const instanceId = await waiting('C-r-twin');
    await moveToken(db, engine, {
      processInstanceId: instanceId,
      executionId: null,
      activityId: 'waitForCompletion',
      force: true,
      now: new Date(),
    });
    const id = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-r-twin') });
    const result = await relayOne(deps(), id);
    expect(result).toMatchObject({
      kind: 'DECIDED',
      decision: { kind: 'PARK', reason: 'AMBIGUOUS_CORRELATION', attempts: 1 },
    });
    const doc = await inboxDoc(id);
    expect(doc).toMatchObject({ status: 'PARKED', reason: 'AMBIGUOUS_CORRELATION', parkDetails: { count: 2 } });
    expect((doc.parkDetails as { waiting: unknown[] }).waiting).toHaveLength(2);
  });
});

describe('buffering at the waiting point', () => {
  test('a completion that overtook its process is consumed the moment the token arrives, not at its next backoff', async () => {
    const started = await startProcessInstance(db, engine, {
      processKey: 'fixture-process',
      businessKey: 'C-r-race',
      variables: { caseId: 'C-r-race' },
      now: new Date(),
    });
    const id = await storePushed(db, {
      name: 'TaskCompleted',
      payload: completionPayload('C-r-race', { completedItems: 2 }),
    });
    expect(await relayOne(deps(), id)).toMatchObject({ kind: 'DECIDED', decision: { kind: 'RETRY' } });

    // The hand-over finishes: in the same transaction the token reaches the catch event and takes the message.
    const handedOver = new Date(Date.now() + 1_234);
    const done = await completeJobRun(db, engine, started.jobs[0]!, {}, handedOver);
    expect(done.consumed).toEqual([id]);
    expect(done.jobs.map((j) => j.activityId)).toEqual(['settle']);
    const doc = await inboxDoc(id);
    expect(doc).toMatchObject({
      status: 'DONE',
      correlatedVia: 'BUFFER',
      processInstanceId: started.instance.id,
      nextAttemptAt: null,
    });
    // Finished by the buffer like by the relay: processedAt is the transaction's clock, expireAt the retention after it.
    expect((doc.processedAt as FirebaseFirestore.Timestamp).toMillis()).toBe(handedOver.getTime());
    expect((doc.expireAt as FirebaseFirestore.Timestamp).toMillis()).toBe(handedOver.getTime() + WEEK);
    expect((await refs.instance(db, started.instance.id).get()).get('variables.completedItems')).toBe(2);
    expect((await refs.instance(db, started.instance.id).get()).get('correlatedMessages')).toEqual([id]);
    expect(await waitingPointsOf(db, started.instance.id, 'C-r-race')).toEqual([]);
  });
});

describe('relayBatch', () => {
  test('per-key order: the older message (by publishTime) goes first even when it was received later', async () => {
    const rounds = await roundsEngine();
    const db2 = firestore('relay-order');
    const key = 'C-order';
    await startProcessInstance(db2, rounds, {
      processKey: 'rounds',
      businessKey: key,
      variables: { caseId: key },
      now: new Date(),
    });
    const t0 = Date.now() - 60_000;
    // Published: started (t0), completed (t0 + 1 s). Received: completed first.
    const completed = await storePushed(db2, {
      name: 'TaskCompleted',
      payload: completionPayload(key, { eventId: 'c1' }),
      publishTime: new Date(t0 + 1_000),
      receivedAt: new Date(t0 + 2_000),
    });
    const started = await storePushed(db2, {
      name: 'ExecutionStarted',
      payload: { caseId: key, eventId: 's1' },
      publishTime: new Date(t0),
      receivedAt: new Date(t0 + 3_000),
    });

    // A call between the two receipts: only the completion is due, and its older message is OPEN in the lane.
    // The call's clock is injected: it steps 10 ms per reading, so durationMs is known exactly.
    const readings: number[] = [];
    const clock = (): number => {
      const reading = 5_000 + readings.length * 10;
      readings.push(reading);
      return reading;
    };
    const early = await relayBatch(
      { ...deps(), db: db2, engine: rounds, now: () => new Date(t0 + 2_500) },
      noQueue,
      log,
      { budgetMs: 20_000, parallelism: 4, batchSize: 50, shards: 16, clock },
    );
    expect(early).toMatchObject({ candidates: 1, skippedForOrder: 1, correlated: 0, retried: 0, technicalFailures: 0 });
    expect(early.skippedForOrder).toBeGreaterThan(0);
    expect(early.durationMs).toBe((readings.at(-1) as number) - (readings[0] as number));
    expect(early.durationMs).toBeGreaterThanOrEqual(0);
    // Held back, not tried: no attempt, and moved just behind its older message (started, due at its receipt).
    const held = (await db2.collection(INBOX).doc(completed).get()).data() ?? {};
    expect(held).toMatchObject({ status: 'OPEN', attempts: 0 });
    expect((held.nextAttemptAt as FirebaseFirestore.Timestamp).toMillis()).toBe(t0 + 3_001);

    const summary = await relayBatch({ ...deps(), db: db2, engine: rounds }, noQueue, log, {
      budgetMs: 20_000,
      parallelism: 4,
      batchSize: 50,
      shards: 16,
    });
    expect(summary.retried).toBe(0);
    expect(summary.durationMs).toBeGreaterThanOrEqual(0);
    for (const id of [started, completed]) {
      expect((await db2.collection(INBOX).doc(id).get()).data()).toMatchObject({ status: 'DONE', attempts: 0 });
    }
    // The completion went second: either the relay took it after the start, or the start's waiting point consumed it.
    expect(summary.correlated + summary.consumedFromBuffer).toBe(2);
  });

  test('a parked document is logged as ERROR with its reason; the summary counts it', async () => {
    const db3 = firestore('relay-park');
    await storePushed(db3, {
      name: 'TaskCompleted',
      payload: completionPayload('C-nobody'),
      receivedAt: new Date(Date.now() - 48 * 3_600_000),
    });
    const summary = await relayBatch({ ...deps(), db: db3 }, noQueue, log, {
      budgetMs: 20_000,
      parallelism: 4,
      batchSize: 50,
      shards: 16,
    });
    expect(summary).toMatchObject({ candidates: 1, parked: { NO_WAITING_INSTANCE: 1 }, correlated: 0 });
    expect(logs.some((l) => l.severity === 'ERROR' && l.reason === 'NO_WAITING_INSTANCE')).toBe(true);
  });
});

describe('technical failure', () => {
  test('logged as WARNING below errorAfterAttempts, then as exactly one ERROR carrying the attempt count', async () => {
    const db4 = firestore('relay-alarm');
    const caseId = 'C-r-alarm';
    const started = await startProcessInstance(db4, engine, {
      processKey: 'fixture-process',
      businessKey: caseId,
      variables: { caseId },
      now: new Date(),
    });
    await completeJobRun(db4, engine, started.jobs[0]!, {}, new Date());
    const id = await storePushed(db4, { name: 'TaskCompleted', payload: completionPayload(caseId) });
    const lines: Array<Record<string, unknown>> = [];
    const own = createLogger((l) => lines.push(JSON.parse(l) as Record<string, unknown>));
    // The transaction fails inside (the waiting instance is found, then the engine throws ECONNRESET); the failure record goes through.
    const broken = failingEngine(engine);
    let now = new Date();
    for (let attempt = 1; attempt <= policy.errorAfterAttempts + 1; attempt++) {
      const summary = await relayBatch({ ...deps(), db: db4, engine: broken, now: () => now }, noQueue, own, {
        budgetMs: 20_000,
        parallelism: 1,
        batchSize: 16,
        shards: 16,
      });
      expect(summary).toMatchObject({ technicalFailures: 1, correlated: 0, parked: {} });
      const doc = (await db4.collection(INBOX).doc(id).get()).data() ?? {};
      expect(doc).toMatchObject({ status: 'OPEN', attempts: attempt });
      const errors = lines.filter((l) => l.severity === 'ERROR' && l.inboxId === id);
      const warnings = lines.filter((l) => l.severity === 'WARNING' && l.inboxId === id);
      // policy.errorAfterAttempts is 3: attempts 1 and 2 warn; 3 and 4 each log one ERROR.
      expect(warnings).toHaveLength(Math.min(attempt, policy.errorAfterAttempts - 1));
      expect(errors).toHaveLength(Math.max(0, attempt - policy.errorAfterAttempts + 1));
      if (attempt === policy.errorAfterAttempts) {
        expect(errors).toEqual([
          expect.objectContaining({
            message: 'inbox document keeps failing technically (still retried)',
            attempts: policy.errorAfterAttempts,
            code: 'ECONNRESET',
          }),
        ]);
      }
      // The next call comes after the backoff (the injected clock, no waiting).
      now = new Date((doc.nextAttemptAt as FirebaseFirestore.Timestamp).toMillis());
    }
    expect(lines.filter((l) => l.severity === 'ERROR' && l.inboxId === id).map((l) => l.attempts)).toEqual([3, 4]);
  });

  // Last, with a client of its own: after an outage the gRPC channel reconnects with its own backoff.
  test('Firestore unreachable: the document stays OPEN, nothing is parked or counted; after recovery it is DONE', async () => {
    const own = firestore('relay-own', { host: proxy.host, projectId });
    const direct = firestore('relay-direct', { projectId });
    await waiting('C-r-outage');
    const id = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-r-outage') });
    proxy.setMode('refuse');
    let result;
    try {
      result = await relayOne(deps({ db: own, transactionTimeoutMs: 1_500 }), id);
      expect(result).toMatchObject({ kind: 'FAILED', failure: { kind: 'retryable' }, decision: null });
      // Read past the proxy while the relay's line is still cut: OPEN, not parked, no attempt counted.
      expect(
        await direct
          .collection(INBOX)
          .doc(id)
          .get()
          .then((d) => d.data()),
      ).toMatchObject({ status: 'OPEN', attempts: 0, reason: null });
    } finally {
      proxy.setMode('forward');
    }
    // The next rounds (the schedule) retry until Firestore answers again. While the channel reconnects,
    // a round may time out yet record its failure (attempts + 1, backoff): the schedule's clock then runs
    // past that backoff, so each round here is an hour later than the one before.
    let recorded = 0;
    let failedRounds = 0;
    let round = 0;
    const healed = await waitFor(
      'the relay to get through',
      async () => {
        round += 1;
        const later = new Date(Date.now() + round * 3_600_000);
        const r = await relayOne(deps({ db: own, transactionTimeoutMs: 1_500, now: () => later }), id);
        if (r.kind === 'FAILED') failedRounds += 1;
        if (r.kind === 'FAILED' && r.decision !== null) recorded += 1;
        return r.kind === 'DECIDED' || (r.kind === 'SKIPPED' && r.why === 'NOT_OPEN') ? r : undefined;
      },
      { timeoutMs: 60_000, everyMs: 200 },
    );
    // The transaction abandoned at the deadline may have committed after recovery: either way, DONE once.
    expect(['DONE', 'SKIPPED']).toContain(healed.kind === 'DECIDED' ? healed.decision.kind : healed.kind);
    expect(await inboxDoc(id)).toMatchObject({ status: 'DONE', reason: null });
    // Attempts count only technical failures of the healing rounds: at least those reported as recorded,
    // at most one per failed round (a record abandoned at its own deadline may still have committed).
    const attempts = (await inboxDoc(id)).attempts as number;
    expect(attempts).toBeGreaterThanOrEqual(recorded);
    expect(attempts).toBeLessThanOrEqual(failedRounds);
  });
});
