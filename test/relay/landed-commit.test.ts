import type { Firestore } from '@google-cloud/firestore';
import type { MessageBuffer } from '../../functions/src/engine/engine';
import type { Engine } from '../../functions/src/engine/engine';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { createLogger } from '../../functions/src/log';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import type { RelayPolicy } from '../../functions/src/relay/decide';
import { account, emptySummary, relayBatch } from '../../functions/src/relay/relay-batch';
import { relayOne, type RelayDeps } from '../../functions/src/relay/relay-one';
import type { JobQueue } from '../../functions/src/tasks/job-queue';
import { commitFaults, writes } from '../support/commit-faults';
import { roundsEngine, fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';
import { waitFor } from '../support/wait';
import { jobsOf } from '../support/process-state';

/**
 * The relay's counters under the Firestore client's transaction retries.
 * The client runs a transaction's callback again when a commit reports
 * UNAVAILABLE (or DEADLINE_EXCEEDED, UNKNOWN, …), even when the commit
 * landed; and a relay gives up waiting for a transaction at its deadline
 * while the commit may still land. Either way the document is DONE (or
 * PARKED, or retried) by this relay call, and the call must count it as
 * such, dispatch its jobs, and log what it logs for it: the summaries of
 * test/relay/concurrency.test.ts counted 1,990 correlations of 2,000 on a
 * busy machine, every document DONE with 0 attempts.
 */
const WEEK = 7 * 24 * 3_600_000;
const policy: RelayPolicy = {
  backoffBaseMs: 60_000,
  backoffCapMs: 600_000,
  bufferWindowMs: 24 * 3_600_000,
  errorAfterAttempts: 3,
};
const firestore = freshFirestores();
let fixture: Engine;

beforeAll(async () => {
  fixture = await fixtureEngine();
});

const deps = (db: Firestore, overrides: Partial<RelayDeps> = {}): RelayDeps => ({
  db,
  engine: fixture,
  policy,
  retentionMs: WEEK,
  transactionTimeoutMs: 10_000,
  now: () => new Date(),
  random: () => 0.5,
  ...overrides,
});
const inboxDoc = async (db: Firestore, id: string): Promise<Record<string, unknown>> =>
  (await db.collection(INBOX).doc(id).get()).data() ?? {};

/** A queue that records what it is asked to enqueue. */
function recordingQueue(): JobQueue & { readonly enqueued: string[] } {
  const enqueued: string[] = [];
  return { enqueued, enqueue: async (id) => (enqueued.push(id), 'CREATED') };
}

/** A case whose token waits at "Wait for completion". */
async function waiting(db: Firestore, caseId: string): Promise<string> {
  const started = await startProcessInstance(db, fixture, {
    processKey: 'fixture-process',
    businessKey: caseId,
    variables: { caseId },
    now: new Date(),
  });
  await completeJobRun(db, fixture, started.jobs[0]!, {}, new Date());
  return started.instance.id;
}

/** Writes the commit request named for `id`'s inbox document, counted as the client sends them. */
const committedWrites = (calls: ReadonlyArray<{ method: string; request: unknown }>, id: string): number[] =>
  calls
    .filter((c) => c.method === 'commit' && writes(c.request, `inbox/${id}`))
    .map((c) => ((c.request as { writes?: unknown[] }).writes ?? []).length);

describe('a relay commit that landed but reported UNAVAILABLE', () => {
  test('a correlation: counted once as correlated, its follow-up job dispatched, the committed writes counted', async () => {
    const db = firestore('landed-done');
    const instanceId = await waiting(db, 'C-landed');
    const id = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-landed') });
    const faults = commitFaults(db);
    faults.afterLanding((request) => writes(request, `inbox/${id}`), { kind: 'UNAVAILABLE' });
    const queue = recordingQueue();
    const summary = await relayBatch(
      deps(db),
      { jobs: queue, timers: recordingQueue() },
      createLogger(() => undefined),
      { budgetMs: 30_000, parallelism: 1, batchSize: 16, shards: 16 },
    );
    faults.restore();
    expect(faults.fired()).toBe(1);

    expect(summary).toMatchObject({ candidates: 1, correlated: 1, skipped: 0, technicalFailures: 0 });
    // The one commit that landed wrote them; the re-run that found the document DONE wrote nothing.
    expect(committedWrites(faults.calls, id)).toHaveLength(1);
    expect(summary.writes).toBe(committedWrites(faults.calls, id)[0]);
    const jobs = (await jobsOf(db, instanceId)).filter((j) => j.activityId === 'settle');
    expect(queue.enqueued).toEqual(jobs.map((j) => j.id));
    expect(jobs).toHaveLength(1);
    expect(await inboxDoc(db, id)).toMatchObject({ status: 'DONE', attempts: 0, processInstanceId: instanceId });
  });

  test('a park: counted as parked and logged at ERROR once', async () => {
    const db = firestore('landed-park');
    const id = await storePushed(db, {
      name: 'TaskCompleted',
      payload: completionPayload('C-landed-park'),
      receivedAt: new Date(Date.now() - 2 * 24 * 3_600_000),
    });
    const faults = commitFaults(db);
    faults.afterLanding((request) => writes(request, `inbox/${id}`), { kind: 'UNAVAILABLE' });
    const logs: Array<Record<string, unknown>> = [];
    const relayDeps = deps(db);
    const result = await relayOne(relayDeps, id);
    faults.restore();
    expect(faults.fired()).toBe(1);
    expect(result).toMatchObject({
      kind: 'DECIDED',
      decision: { kind: 'PARK', reason: 'NO_WAITING_INSTANCE', attempts: 1 },
    });
    const summary = emptySummary();
    await account(
      summary,
      id,
      result,
      relayDeps,
      { jobs: recordingQueue(), timers: recordingQueue() },
      createLogger((l) => logs.push(JSON.parse(l) as Record<string, unknown>)),
    );
    expect(summary.parked).toEqual({ NO_WAITING_INSTANCE: 1 });
    expect(logs.filter((l) => l.message === 'inbox document parked')).toHaveLength(1);
    expect(await inboxDoc(db, id)).toMatchObject({ status: 'PARKED', reason: 'NO_WAITING_INSTANCE', attempts: 1 });
  });

  test('a retry: counted as retried, one attempt on the document', async () => {
    const db = firestore('landed-retry');
    const id = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-landed-retry') });
    const faults = commitFaults(db);
    faults.afterLanding((request) => writes(request, `inbox/${id}`), { kind: 'UNAVAILABLE' });
    const result = await relayOne(deps(db), id);
    faults.restore();
    expect(faults.fired()).toBe(1);
    expect(result).toMatchObject({ kind: 'DECIDED', decision: { kind: 'RETRY', attempts: 1 } });
    expect(await inboxDoc(db, id)).toMatchObject({ status: 'OPEN', attempts: 1 });
  });
});

describe('a relay transaction past its deadline', () => {
  test('its commit landed and the answer came too late: the relay learns it landed and counts it as correlated', async () => {
    const db = firestore('late-answer');
    const instanceId = await waiting(db, 'C-late');
    const id = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-late') });
    const faults = commitFaults(db);
    let release = (): void => undefined;
    faults.afterLanding((request) => writes(request, `inbox/${id}`), {
      kind: 'HOLD',
      release: new Promise<void>((r) => (release = r)),
    });
    try {
      const result = await relayOne(deps(db, { transactionTimeoutMs: 1_000 }), id);
      expect(faults.fired()).toBe(1);
      expect(result).toMatchObject({ kind: 'DECIDED', decision: { kind: 'DONE', processInstanceId: instanceId } });
      if (result.kind === 'DECIDED') expect(result.jobs.map((j) => j.activityId)).toEqual(['settle']);
      expect(await inboxDoc(db, id)).toMatchObject({ status: 'DONE', attempts: 0 });
    } finally {
      release();
      faults.restore();
    }
  });

  test('a callback still running at the deadline never commits after it: the call`s count stays true', async () => {
    const db = firestore('abandoned');
    // The buffer lookup of the next waiting point blocks until the test lets it go (after the deadline).
    let gate: Promise<void> | null = null;
    let open = (): void => undefined;
    let reached = false;
    const real = inboxBuffer(WEEK);
    const gated: MessageBuffer = {
      take: async (uow, point, now) => {
        if (gate !== null) {
          reached = true;
          await gate;
        }
        return real.take(uow, point, now);
      },
    };
    const engine = await roundsEngine(gated);
    await startProcessInstance(db, engine, {
      processKey: 'rounds',
      businessKey: 'K-abandoned',
      variables: { caseId: 'K-abandoned' },
      now: new Date(),
    });
    const id = await storePushed(db, { name: 'ExecutionStarted', payload: { caseId: 'K-abandoned' } });
    gate = new Promise<void>((r) => (open = r));
    const faults = commitFaults(db);
    try {
      const result = await relayOne(deps(db, { engine, transactionTimeoutMs: 1_000 }), id);
      expect(reached).toBe(true);
      expect(result.kind).toBe('FAILED');
      const before = faults.calls.length;
      open();
      // The abandoned attempt ends one way or the other: a commit naming the document, or a rollback.
      await waitFor('the abandoned transaction to end', async () =>
        faults.calls
          .slice(before)
          .some((c) => c.method === 'rollback' || (c.method === 'commit' && writes(c.request, `inbox/${id}`)))
          ? true
          : undefined,
      );
      expect(
        faults.calls.slice(before).filter((c) => c.method === 'commit' && writes(c.request, `inbox/${id}`)),
      ).toHaveLength(0);
      expect((await inboxDoc(db, id)).status).toBe('OPEN');
    } finally {
      open();
      faults.restore();
    }
  });
});
