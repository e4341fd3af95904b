import type { Engine } from '../../functions/src/engine/engine';
import type { WaitingPoint } from '../../functions/src/engine/state';
import { applyTransition } from '../../functions/src/engine/store/apply';
import { refs, shardOf } from '../../functions/src/engine/store/collections';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { correlate } from '../../functions/src/engine/store/correlate';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { runUnitOfWork } from '../../functions/src/engine/store/unit-of-work';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { eventSubscriptionCount, waitingPointsOf } from '../support/waiting';

/**
 * Waiting points live in the correlation key document alone: no
 * eventSubscriptions document is written or deleted, which the unit of
 * work's write count shows, and the key document carries what the waiting
 * queries read (shard, waitingFor, waitingSince).
 */
let engine: Engine;
const db = freshFirestores()('engine-waiting-points');

beforeAll(async () => {
  engine = await fixtureEngine();
});

const started = async (key: string) =>
  startProcessInstance(db, engine, {
    processKey: 'fixture-process',
    businessKey: key,
    variables: { caseId: key },
    now: new Date(),
  });

test('a token that starts waiting writes the instance and the key document, nothing per point; the first event of a gateway deletes all its points', async () => {
  const { instance } = await started('C-wp-gw');
  const at = (ms: number): Date => new Date(Date.UTC(2026, 0, 1) + ms);
  const point = (messageName: string, ms: number): WaitingPoint => ({
    messageName,
    correlationKey: 'C-wp-gw',
    processInstanceId: instance.id,
    executionId: 'e-gw',
    activityId: `catch${messageName}`,
    gatewayId: 'gate',
    createdAt: at(ms),
  });
  const points = [point('TaskCompleted', 2_000), point('TaskCancelled', 1_000)];
  const empty = {
    executions: [],
    jobs: [],
    timers: [],
    cancelTimers: [],
    staleJobs: [],
    userTasks: [],
    closeUserTasks: [],
    calls: [],
    cancelCalls: [],
    endBatches: [],
  };

  const subscribed = await runUnitOfWork(db, async (uow) =>
    applyTransition(uow, { ...empty, instance, subscribe: points, unsubscribe: [] }, new Date()),
  );
  // Two branches of one token: the instance and one key document (an earlier version wrote one eventSubscriptions document per branch too: 4).
  expect(subscribed.stats.writes).toBe(2);
  const keyRef = refs.correlationKey(db, 'C-wp-gw');
  const stored = (await keyRef.get()).data();
  expect(stored).toMatchObject({ shard: shardOf(keyRef.id), waitingFor: ['TaskCancelled', 'TaskCompleted'] });
  expect((stored?.waitingSince as FirebaseFirestore.Timestamp).toMillis()).toBe(at(1_000).getTime());
  expect(await waitingPointsOf(db, instance.id)).toHaveLength(2);

  const left = await runUnitOfWork(db, async (uow) =>
    applyTransition(uow, { ...empty, instance, subscribe: [], unsubscribe: points }, new Date()),
  );
  // The instance and the key document's delete (both lists empty); no delete per point.
  expect(left.stats.writes).toBe(2);
  expect((await keyRef.get()).exists).toBe(false);
  expect(await eventSubscriptionCount(db)).toBe(0);
});

test('a key document with only its lane has no waitingSince, so the ordered waiting queries skip it', async () => {
  const { instance } = await started('C-wp-lane');
  const point: WaitingPoint = {
    messageName: 'TaskCompleted',
    correlationKey: 'C-wp-lane',
    processInstanceId: instance.id,
    executionId: 'e-lane',
    activityId: 'wait',
    createdAt: new Date(),
  };
  const empty = {
    executions: [],
    jobs: [],
    timers: [],
    cancelTimers: [],
    staleJobs: [],
    userTasks: [],
    closeUserTasks: [],
    calls: [],
    cancelCalls: [],
    endBatches: [],
  };
  await runUnitOfWork(db, async (uow) =>
    applyTransition(uow, { ...empty, instance, subscribe: [point], unsubscribe: [] }, new Date()),
  );
  const keyRef = refs.correlationKey(db, 'C-wp-lane');
  await keyRef.update({
    open: [{ inboxId: 'x', messageName: 'TaskCompleted', publishTime: null, receivedAt: new Date() }],
  });
  await runUnitOfWork(db, async (uow) =>
    applyTransition(uow, { ...empty, instance, subscribe: [], unsubscribe: [point] }, new Date()),
  );
  const data = (await keyRef.get()).data();
  expect(data).toMatchObject({ waiting: [], waitingFor: [], shard: shardOf(keyRef.id) });
  expect(data).not.toHaveProperty('waitingSince');
});

/**
 * The writes of correlating a case's completion: the instance document
 * (its token moved on and the settlement job added, one write), the key document
 * (deleted: both lists empty) and the boundary timer (deleted). Before this
 * version also the execution, the job and the eventSubscriptions document: 6.
 */
const WRITES_AT_CORRELATION = 3;

test('a correlation deletes no eventSubscriptions document: its writes are the instance document, the key document and the timer', async () => {
  const { jobs } = await started('C-wp-path');
  await completeJobRun(
    db,
    engine,
    jobs[0] ?? { id: '', processInstanceId: '' },
    { handedOverMessageId: 'm' },
    new Date(),
  );
  const { result, stats } = await runUnitOfWork(db, async (uow) =>
    correlate(uow, engine, {
      messageName: 'TaskCompleted',
      correlationKey: 'C-wp-path',
      variables: { completedItems: 1 },
      now: new Date(),
    }),
  );
  expect(result.kind).toBe('CORRELATED');
  expect(stats.writes).toBe(WRITES_AT_CORRELATION);
  expect(await eventSubscriptionCount(db)).toBe(0);
});
