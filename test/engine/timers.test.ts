import { join } from 'node:path';
import type { Firestore } from '@google-cloud/firestore';
import { Engine } from '../../functions/src/engine/engine';
import { loadProcessModel } from '../../functions/src/engine/deployed';
import { executionId, instanceId } from '../../functions/src/engine/ids';
import type { ExecutionState, TimerState } from '../../functions/src/engine/state';
import { cancelTokenRun } from '../../functions/src/engine/store/cancel-token';
import { COLLECTIONS, refs, shardOf, STATE_SHARDS } from '../../functions/src/engine/store/collections';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { STALE_JOB_ERROR } from '../../functions/src/engine/state';
import { correlate } from '../../functions/src/engine/store/correlate';
import { fireTimerRun } from '../../functions/src/engine/store/fire-timer';
import { moveToken } from '../../functions/src/engine/store/move-token';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { FIRED_TIMER_RETENTION_MS } from '../../functions/src/engine/store/timers';
import { runUnitOfWork } from '../../functions/src/engine/store/unit-of-work';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import { commitFaults, writes } from '../support/commit-faults';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';
import { findJob, findToken, jobRecordsOf } from '../support/process-state';
import { eventSubscriptionCount, waitingPointsOf } from '../support/waiting';

const FIXTURES = join(__dirname, '..', 'fixtures', 'bpmn');
const DAY = 24 * 3_600_000;
const dbs = freshFirestores();
const db = dbs('engine-timers');
let engine: Engine;

beforeAll(async () => {
  const models = [
    await loadProcessModel(join(FIXTURES, 'timer-paths.bpmn')),
    await loadProcessModel(join(FIXTURES, 'timer-kinds.bpmn')),
  ];
  engine = new Engine(
    models,
    {},
    new Set(['handOver', 'settle', 'escalate', 'work', 'sendReminder']),
    inboxBuffer(7 * DAY),
  );
});

const get = async (ref: FirebaseFirestore.DocumentReference): Promise<Record<string, unknown> | undefined> =>
  (await ref.get()).data();
const execution = async (store: Firestore, id: string): Promise<ExecutionState> =>
  (await findToken(store, id)) as ExecutionState;
const timerDoc = async (store: Firestore, id: string): Promise<Record<string, unknown> | undefined> =>
  get(refs.timer(store, id));
const timersOf = async (store: Firestore, instance: string): Promise<Array<Record<string, unknown>>> =>
  (await store.collection(COLLECTIONS.timers).where('processInstanceId', '==', instance).get()).docs.map((d) =>
    d.data(),
  );
/** The instance's waiting points (in its key documents), each as `execution/activity`. */
const subscriptionsOf = async (store: Firestore, instance: string): Promise<string[]> =>
  (await waitingPointsOf(store, instance)).map((p) => `${String(p.executionId)}/${String(p.activityId)}`);
const jobsOf = jobRecordsOf;
const only = <T>(items: readonly T[]): T => {
  expect(items).toHaveLength(1);
  return items[0] as T;
};
const message = (key: string) => ({
  messageName: 'TaskCompleted',
  correlationKey: key,
  variables: { completedItems: 2 },
  now: new Date(),
});

/** A timer-paths instance at its hand-over (job and deadline timer set). */
async function atHandOver(store: Firestore, key: string, variables: Record<string, unknown> = {}) {
  const started = await startProcessInstance(store, engine, {
    processKey: 'timer-paths',
    businessKey: key,
    variables: { caseId: key, ...variables },
    now: new Date(),
  });
  return {
    id: started.instance.id,
    job: only(started.jobs),
    deadline: only(started.timers),
    token: executionId(started.instance.id, 'start'),
  };
}

/** A timer-paths instance waiting at its event-based gateway (message branch and overdue timer). */
async function atGateway(store: Firestore, key: string, variables: Record<string, unknown> = {}) {
  const handOver = await atHandOver(store, key, variables);
  const done = await completeJobRun(store, engine, handOver.job, {}, new Date());
  expect(done.status).toBe('COMPLETED');
  return { ...handOver, done, overdue: done.timers[0] };
}

describe('timers on the Firestore emulator', () => {
  test('an interrupting boundary timer: stored with shard and horizon, not fired early, fired once; the job ends STALE', async () => {
    const { id, job, deadline, token } = await atHandOver(db, 'C-t1');
    const stored = await timerDoc(db, deadline.id);
    expect(stored).toMatchObject({
      status: 'PENDING',
      activityId: 'handOverLate',
      waitingAt: 'handOver',
      horizon: 'NEAR',
      shard: shardOf(deadline.id),
    });
    expect(stored?.shard).toBeLessThan(STATE_SHARDS);
    expect(stored?.expireAt).toBeUndefined();
    expect((await execution(db, token)).timerIds).toEqual([deadline.id]);

    const early = await fireTimerRun(db, engine, deadline.id, new Date(deadline.dueAt.getTime() - 2_000));
    expect(early).toMatchObject({ status: 'NOT_DUE', jobs: [], timers: [] });
    expect((await timerDoc(db, deadline.id))?.status).toBe('PENDING');

    const at = new Date(deadline.dueAt.getTime() - 500); // within the clock-skew tolerance
    const fired = await fireTimerRun(db, engine, deadline.id, at);
    expect(fired.status).toBe('FIRED');
    expect(only(fired.jobs).activityId).toBe('escalate');
    expect(await timerDoc(db, deadline.id)).toMatchObject({
      status: 'FIRED',
      firedAt: expect.anything(),
      expireAt: expect.anything(),
    });
    const expireAt = (await timerDoc(db, deadline.id))?.expireAt as FirebaseFirestore.Timestamp;
    expect(expireAt.toMillis()).toBe(at.getTime() + FIRED_TIMER_RETENTION_MS);
    expect(await execution(db, token)).toMatchObject({ activityId: 'escalate', status: 'WAITING_JOB', timerIds: [] });

    expect((await fireTimerRun(db, engine, deadline.id, at)).status).toBe('ALREADY_FIRED');
    // The firing ended the hand-over's job in its own transaction: a late completion finds it finished, stale.
    expect(await findJob(db, job.id)).toMatchObject({ status: 'DONE', lastError: STALE_JOB_ERROR });
    expect((await completeJobRun(db, engine, job, {}, new Date())).status).toBe('ALREADY_FINISHED');
    expect((await fireTimerRun(db, engine, 'f'.repeat(40), at)).status).toBe('NOT_FOUND');
    expect((await jobsOf(db, id)).filter((j) => j.activityId === 'escalate')).toHaveLength(1);
  });

  test('the gateway: one point per message branch (in the key document, with its shard), the deadline deleted, the overdue timer set', async () => {
    const { id, deadline, token, overdue, done } = await atGateway(db, 'C-t2');
    expect(await timerDoc(db, deadline.id)).toBeUndefined();
    expect(await subscriptionsOf(db, id)).toEqual([`${token}/waitForCompletion`]);
    const keyRef = refs.correlationKey(db, 'C-t2');
    expect(await get(keyRef)).toMatchObject({
      shard: shardOf(keyRef.id),
      waitingFor: ['TaskCompleted'],
      waiting: [{ gatewayId: 'completedOrOverdue', activityId: 'waitForCompletion', executionId: token }],
    });
    expect(await eventSubscriptionCount(db)).toBe(0);
    expect(overdue).toMatchObject({ activityId: 'overdue', waitingAt: 'completedOrOverdue' });
    expect(done.timers.map((t) => t.id)).toEqual([overdue?.id]);
    expect(await timerDoc(db, overdue?.id ?? '')).toMatchObject({ status: 'PENDING', horizon: 'NEAR' });
  });

  test('the timer wins at the gateway: the message branch is removed; a later message finds nobody', async () => {
    const { id, overdue } = await atGateway(db, 'C-t3');
    const fired = await fireTimerRun(db, engine, overdue?.id ?? '', overdue?.dueAt ?? new Date());
    expect(fired.status).toBe('FIRED');
    expect(only(fired.jobs).activityId).toBe('escalate');
    expect(await subscriptionsOf(db, id)).toEqual([]);
    expect(await get(refs.correlationKey(db, 'C-t3'))).toBeUndefined();
    expect((await runUnitOfWork(db, (uow) => correlate(uow, engine, message('C-t3')))).result.kind).toBe(
      'NO_WAITING_INSTANCE',
    );
  });

  test('the message wins at the gateway: the overdue timer is deleted; its task later finds NOT_FOUND', async () => {
    const { id, overdue } = await atGateway(db, 'C-t4');
    const correlated = await runUnitOfWork(db, (uow) => correlate(uow, engine, message('C-t4')));
    expect(correlated.result.kind).toBe('CORRELATED');
    expect(await timerDoc(db, overdue?.id ?? '')).toBeUndefined();
    expect(await subscriptionsOf(db, id)).toEqual([]);
    expect((await fireTimerRun(db, engine, overdue?.id ?? '', new Date(Date.now() + 30 * DAY))).status).toBe(
      'NOT_FOUND',
    );
    expect((await jobsOf(db, id)).map((j) => j.activityId).sort()).toEqual(['handOver', 'settle']);
  });

  test('a timer beyond the horizon is stored FAR and not handed out for dispatch', async () => {
    const { overdue, done } = await atGateway(db, 'C-t5', { completionDeadline: 'P60D' });
    expect(done.timers).toEqual([]);
    expect(overdue).toBeUndefined();
    const stored = await db
      .collection(COLLECTIONS.timers)
      .where('activityId', '==', 'overdue')
      .where('processInstanceId', '==', instanceId('timer-paths', 'C-t5'))
      .get();
    expect(only(stored.docs).data()).toMatchObject({ horizon: 'FAR', status: 'PENDING' });
  });

  test('a message buffered before the gateway is delivered on arrival: the overdue timer never exists', async () => {
    const { id, job } = await atHandOver(db, 'C-t6');
    const inboxId = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-t6') });
    const done = await completeJobRun(db, engine, job, {}, new Date());
    expect(done).toMatchObject({ status: 'COMPLETED', consumed: [inboxId], timers: [] });
    expect(done.jobs.map((j) => j.activityId)).toEqual(['settle']);
    expect(await timersOf(db, id)).toEqual([]);
    expect(await subscriptionsOf(db, id)).toEqual([]);
  });

  test('timer catch event and a non-interrupting cycle: each firing a new token, the next occurrence replacing the fired one', async () => {
    const approvalDueAt = new Date(Date.now() + DAY);
    const variables = { orderId: 'O-t7', approvalDueAt: approvalDueAt.toISOString() };
    const started = await startProcessInstance(db, engine, {
      processKey: 'timer-kinds',
      businessKey: 'O-t7',
      variables,
      now: new Date(),
    });
    const token = executionId(started.instance.id, 'start');
    const delay = only(started.timers);
    const atWork = await fireTimerRun(db, engine, delay.id, delay.dueAt);
    const workJob = only(atWork.jobs);
    let remind = only(atWork.timers);
    for (let n = 1; n <= 3; n++) {
      const fired = await fireTimerRun(db, engine, remind.id, remind.dueAt);
      expect(fired.status).toBe('FIRED');
      expect(only(fired.jobs)).toMatchObject({
        activityId: 'sendReminder',
        executionId: executionId(started.instance.id, `timer:${remind.id}`),
      });
      expect((await execution(db, token)).timerIds).toEqual(fired.timers.map((t: TimerState) => t.id));
      if (n === 3) expect(fired.timers).toEqual([]);
      else remind = only(fired.timers);
    }
    expect(await execution(db, token)).toMatchObject({ status: 'WAITING_JOB', jobId: workJob.id });
    const approval = await completeJobRun(db, engine, workJob, {}, new Date());
    const late = only(approval.timers);
    expect(late).toMatchObject({ activityId: 'approvalLate', dueAt: approvalDueAt });
    expect((await subscriptionsOf(db, started.instance.id)).map((p) => p.split('/')[0])).toEqual([token]);
    expect((await fireTimerRun(db, engine, late.id, late.dueAt)).status).toBe('FIRED');
    expect(await subscriptionsOf(db, started.instance.id)).toEqual([]);
    expect(await execution(db, token)).toMatchObject({ status: 'ENDED', activityId: 'late' });
  });

  test('a timer its token no longer lists is STALE: deleted, nothing moved', async () => {
    const { deadline, token } = await atHandOver(db, 'C-t8');
    const orphan = { ...(await timerDoc(db, deadline.id)), id: 'a'.repeat(40) };
    await refs.timer(db, orphan.id).set(orphan);
    const stale = await fireTimerRun(db, engine, orphan.id, new Date(deadline.dueAt.getTime() + 1));
    expect(stale).toMatchObject({ status: 'STALE', jobs: [] });
    expect(await timerDoc(db, orphan.id)).toBeUndefined();
    expect(await execution(db, token)).toMatchObject({ activityId: 'handOver', timerIds: [deadline.id] });
  });

  test('repairs remove the timers and gateway points of the token they move or cancel', async () => {
    const gate = await atGateway(db, 'C-t9');
    const moved = await moveToken(db, engine, {
      processInstanceId: gate.id,
      executionId: gate.token,
      activityId: 'escalate',
      force: false,
      now: new Date(),
    });
    expect(only(moved.jobs).activityId).toBe('escalate');
    expect(await timersOf(db, gate.id)).toEqual([]);
    expect(await subscriptionsOf(db, gate.id)).toEqual([]);

    const task = await atHandOver(db, 'C-t10');
    const back = await moveToken(db, engine, {
      processInstanceId: task.id,
      executionId: task.token,
      activityId: 'completedOrOverdue',
      force: false,
      now: new Date(),
    });
    expect(back.timers.map((t) => t.activityId)).toEqual(['overdue']);
    expect(await subscriptionsOf(db, task.id)).toEqual([`${task.token}/waitForCompletion`]);
    await cancelTokenRun(db, engine, task.id, task.token, new Date());
    expect(await timersOf(db, task.id)).toEqual([]);
    expect(await subscriptionsOf(db, task.id)).toEqual([]);
  });

  test('a landed commit whose answer is lost: the re-run finds its own firing, reports it FIRED with the job it created, and changes nothing more', async () => {
    const client = dbs('engine-timers-landed');
    const { id, deadline, token } = await atHandOver(client, 'C-t11');
    const faults = commitFaults(client);
    try {
      faults.afterLanding((request) => writes(request, `${COLLECTIONS.timers}/${deadline.id}`), {
        kind: 'UNAVAILABLE',
      });
      const result = await fireTimerRun(client, engine, deadline.id, deadline.dueAt);
      expect(faults.fired()).toBe(1);
      // Its own firing: what it created is reported, so the caller dispatches it now (not the sweep, later).
      expect(result.status).toBe('FIRED');
      expect(result.jobs.map((j) => j.activityId)).toEqual(['escalate']);
    } finally {
      faults.restore();
    }
    // Another call's delivery of the same timer is a duplicate.
    expect((await fireTimerRun(client, engine, deadline.id, deadline.dueAt)).status).toBe('ALREADY_FIRED');
    expect((await jobsOf(client, id)).filter((j) => j.activityId === 'escalate')).toHaveLength(1);
    expect(await execution(client, token)).toMatchObject({ activityId: 'escalate' });
    expect((await timerDoc(client, deadline.id))?.status).toBe('FIRED');
  });
});
