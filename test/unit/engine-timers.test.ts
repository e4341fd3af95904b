import { join } from 'node:path';
import { loadProcessModel } from '../../functions/src/engine/deployed';
import type { ProcessModel } from '../../functions/src/bpmn/model';
import { executionId, timerId } from '../../functions/src/engine/ids';
import type {
  ExecutionState,
  InstanceState,
  TimerState,
  Transition,
  WaitingPoint,
} from '../../functions/src/engine/state';
import { fireTimer, timerIsLive } from '../../functions/src/engine/timer-transitions';
import {
  cancelToken,
  completeJob,
  deliverMessage,
  failJob,
  placeToken,
  startInstance,
} from '../../functions/src/engine/transitions';

const FIXTURES = join(__dirname, '..', 'fixtures', 'bpmn');
const t0 = new Date('2026-12-01T10:00:00Z');
const later = (ms: number): Date => new Date(t0.getTime() + ms);
const MIN = 60_000;
const HOUR = 60 * MIN;
let paths: ProcessModel;
let kinds: ProcessModel;

beforeAll(async () => {
  paths = await loadProcessModel(join(FIXTURES, 'timer-paths.bpmn'));
  kinds = await loadProcessModel(join(FIXTURES, 'timer-kinds.bpmn'));
});

const only = <T>(items: readonly T[]): T => {
  expect(items).toHaveLength(1);
  return items[0] as T;
};
const start = (model: ProcessModel, variables: Record<string, unknown>): Transition =>
  startInstance(model, {}, { instanceId: 'i-1', executionId: 'e-1', businessKey: 'C-1', variables, now: t0 });
/** The state of token `id` after `t` (the instance and that token as the store would hold them). */
/** The state of token `id` after `t`, with the tokens `t` wrote as the instance's (single-token models here). */
const stateOf = (
  t: Transition,
  id = 'e-1',
): { instance: InstanceState; execution: ExecutionState; tokens: Record<string, ExecutionState> } => {
  const execution = t.executions.find((e) => e.id === id);
  if (execution === undefined) throw new Error(`no execution ${id}`);
  return { instance: t.instance, execution, tokens: Object.fromEntries(t.executions.map((e) => [e.id, e])) };
};
const fire = (
  model: ProcessModel,
  t: Transition,
  timer: TimerState,
  now = timer.dueAt,
  id = 'e-1',
): Transition & { timer: TimerState } => fireTimer(model, {}, { ...stateOf(t, id), timer }, now);

describe('timer catch event and boundary cycle (timer-kinds)', () => {
  test('the delay: the token waits WAITING_TIMER with one PENDING timer due 10 minutes on', () => {
    const t = start(kinds, { orderId: 'O-1' });
    const timer = only(t.timers);
    expect(timer).toEqual({
      id: timerId('e-1', 2, 'delay', 1),
      processInstanceId: 'i-1',
      executionId: 'e-1',
      activityId: 'delay',
      waitingAt: 'delay',
      step: 2,
      dueAt: later(10 * MIN),
      occurrence: 1,
      repetitionsLeft: 0,
      intervalMs: null,
      status: 'PENDING',
      createdAt: t0,
      firedAt: null,
    });
    expect(only(t.executions)).toMatchObject({
      activityId: 'delay',
      status: 'WAITING_TIMER',
      timerIds: [timer.id],
      jobId: null,
    });
    expect(t.jobs).toEqual([]);
    expect(t.cancelTimers).toEqual([]);
    // The same step sets the same timer: a transaction re-run creates no second one.
    expect(start(kinds, { orderId: 'O-1' }).timers[0]?.id).toBe(timer.id);
  });

  test('firing the delay moves the token on: a job at the async task and its reminder cycle, the first an hour on', () => {
    const started = start(kinds, { orderId: 'O-1' });
    const fired = fire(kinds, started, only(started.timers), later(11 * MIN));
    expect(fired.timer).toMatchObject({ status: 'FIRED', firedAt: later(11 * MIN), id: only(started.timers).id });
    expect(fired.cancelTimers).toEqual([]);
    expect(only(fired.jobs)).toMatchObject({ activityId: 'work', status: 'PENDING' });
    const remind = only(fired.timers);
    expect(remind).toMatchObject({
      activityId: 'remind',
      waitingAt: 'work',
      dueAt: later(11 * MIN + HOUR),
      occurrence: 1,
      repetitionsLeft: 2,
      intervalMs: HOUR,
    });
    expect(only(fired.executions)).toMatchObject({ activityId: 'work', status: 'WAITING_JOB', timerIds: [remind.id] });
  });

  test('the non-interrupting cycle: three firings, each a new token on the reminder path; the task token keeps its job', () => {
    const started = start(kinds, { orderId: 'O-1' });
    let t: Transition = fire(kinds, started, only(started.timers));
    const jobId = only(t.jobs).id;
    let timer = only(t.timers);
    const dues: Date[] = [];
    const spawned: string[] = [];
    for (let n = 1; n <= 3; n++) {
      dues.push(timer.dueAt);
      // Fired late: the next occurrence follows the plan, not the late firing.
      const fired = fire(kinds, t, timer, new Date(timer.dueAt.getTime() + 5 * MIN));
      expect(fired.timer).toMatchObject({ occurrence: n, status: 'FIRED' });
      expect(fired.cancelTimers).toEqual([]);
      const token = executionId('i-1', `timer:${timer.id}`);
      spawned.push(token);
      expect(only(fired.jobs)).toMatchObject({ activityId: 'sendReminder', executionId: token });
      expect(stateOf(fired, token).execution).toMatchObject({ activityId: 'sendReminder', status: 'WAITING_JOB' });
      const taskToken = stateOf(fired).execution;
      expect(taskToken).toMatchObject({ activityId: 'work', status: 'WAITING_JOB', jobId });
      expect(fired.instance.activeExecutionIds).toEqual(['e-1', ...spawned]);
      if (n < 3) {
        const next = only(fired.timers);
        expect(next).toMatchObject({
          occurrence: n + 1,
          repetitionsLeft: 2 - n,
          dueAt: new Date(timer.dueAt.getTime() + HOUR),
          step: timer.step,
        });
        expect(taskToken.timerIds).toEqual([next.id]);
        timer = next;
      } else {
        expect(fired.timers).toEqual([]);
        expect(taskToken.timerIds).toEqual([]);
      }
      t = fired;
    }
    expect(new Set(spawned).size).toBe(3);
    expect(dues.map((d) => d.getTime() - (dues[0]?.getTime() ?? 0))).toEqual([0, HOUR, 2 * HOUR]);
  });

  test('the job finishing first cancels the reminder; the receive task without its date variable raises INVALID_TIMER and waits for nothing', () => {
    const started = start(kinds, { orderId: 'O-1' });
    const atWork = fire(kinds, started, only(started.timers));
    const done = completeJob(kinds, {}, { ...stateOf(atWork), job: only(atWork.jobs) }, {}, later(HOUR));
    expect(done.cancelTimers).toEqual([only(atWork.timers).id]);
    expect(done.subscribe).toEqual([]);
    expect(done.timers).toEqual([]);
    expect(only(done.instance.incidents)).toMatchObject({ reason: 'INVALID_TIMER', activityId: 'approval' });
    expect(only(done.instance.incidents).message).toContain(
      'timer approvalLate: variable approvalDueAt of timer ${approvalDueAt} is absent and the timer has no inbox:default',
    );
    expect(only(done.executions)).toMatchObject({ status: 'ACTIVE', activityId: 'approval', timerIds: [] });
  });

  const atApproval = (): Transition => {
    const started = start(kinds, { orderId: 'O-1', approvalDueAt: '2026-12-03T00:00:00+01:00' });
    const atWork = fire(kinds, started, only(started.timers));
    return completeJob(kinds, {}, { ...stateOf(atWork), job: only(atWork.jobs) }, {}, later(HOUR));
  };

  test('the receive task: a waiting point and its interrupting date timer, set together', () => {
    const t = atApproval();
    expect(only(t.subscribe)).toMatchObject({
      messageName: 'ApprovalGiven',
      correlationKey: 'O-1',
      activityId: 'approval',
    });
    expect(only(t.subscribe).gatewayId).toBeUndefined();
    expect(only(t.timers)).toMatchObject({
      activityId: 'approvalLate',
      waitingAt: 'approval',
      dueAt: new Date('2026-12-02T23:00:00Z'),
    });
    expect(only(t.executions)).toMatchObject({ status: 'WAITING_MESSAGE', timerIds: [only(t.timers).id] });
  });

  test('the message first: its point goes, the boundary timer is cancelled', () => {
    const t = atApproval();
    const approved = deliverMessage(kinds, {}, stateOf(t), { by: 'ops' }, later(2 * HOUR), 'inbox-1');
    expect(only(approved.unsubscribe)).toMatchObject({
      executionId: 'e-1',
      activityId: 'approval',
      messageName: 'ApprovalGiven',
    });
    expect(approved.cancelTimers).toEqual([only(t.timers).id]);
    expect(approved.instance).toMatchObject({ status: 'COMPLETED' });
    expect(only(approved.executions)).toMatchObject({ activityId: 'approved', status: 'ENDED', timerIds: [] });
  });

  test('the timer first: the token leaves the receive task through the boundary event; its point is unsubscribed', () => {
    const t = atApproval();
    const late = fire(kinds, t, only(t.timers));
    expect(only(late.unsubscribe)).toMatchObject({ executionId: 'e-1', activityId: 'approval' });
    expect(late.cancelTimers).toEqual([]);
    expect(late.instance.status).toBe('COMPLETED');
    expect(only(late.executions)).toMatchObject({ activityId: 'late', status: 'ENDED' });
  });
});

describe('boundary deadline and event-based gateway (timer-paths)', () => {
  test('entering the async task sets its boundary timer from the variable', () => {
    const t = start(paths, { caseId: 'C-1', handOverDeadline: 'PT5M' });
    const job = only(t.jobs);
    expect(only(t.timers)).toMatchObject({
      activityId: 'handOverLate',
      waitingAt: 'handOver',
      dueAt: later(5 * MIN),
      step: 2,
    });
    expect(only(t.executions)).toMatchObject({ status: 'WAITING_JOB', jobId: job.id, timerIds: [only(t.timers).id] });
    expect(only(start(paths, { caseId: 'C-1' }).timers).dueAt).toEqual(later(HOUR));
  });

  test('an invalid variable at the task: INVALID_TIMER, neither job nor timer', () => {
    const t = start(paths, { caseId: 'C-1', handOverDeadline: 'soon' });
    expect(t.jobs).toEqual([]);
    expect(t.timers).toEqual([]);
    expect(only(t.instance.incidents)).toMatchObject({ reason: 'INVALID_TIMER', activityId: 'handOver' });
  });

  test('the interrupting deadline: the token leaves the task through the boundary event; its job is no longer the one it waits for', () => {
    const started = start(paths, { caseId: 'C-1' });
    const late = fire(paths, started, only(started.timers));
    const escalation = only(late.jobs);
    expect(escalation.activityId).toBe('escalate');
    expect(only(late.executions)).toMatchObject({
      activityId: 'escalate',
      status: 'WAITING_JOB',
      jobId: escalation.id,
      timerIds: [],
    });
    expect(escalation.id).not.toBe(only(started.jobs).id);
    expect(late.cancelTimers).toEqual([]);
    expect(late.subscribe).toEqual([]);
    // The hand-over's job is ended in the same transaction: its handler never runs, its failure can never drag the token back.
    expect(late.staleJobs).toEqual([only(started.jobs).id]);
  });

  const atGateway = (variables: Record<string, unknown> = { caseId: 'C-1' }): Transition => {
    const started = start(paths, variables);
    return completeJob(paths, {}, { ...stateOf(started), job: only(started.jobs) }, {}, later(MIN));
  };

  test('the job done: the deadline is cancelled; the gateway waits for a message and a timer', () => {
    const started = start(paths, { caseId: 'C-1' });
    const t = atGateway();
    expect(t.cancelTimers).toEqual([only(started.timers).id]);
    const point = only(t.subscribe);
    expect(point).toEqual({
      messageName: 'TaskCompleted',
      correlationKey: 'C-1',
      processInstanceId: 'i-1',
      executionId: 'e-1',
      activityId: 'waitForCompletion',
      gatewayId: 'completedOrOverdue',
      createdAt: later(MIN),
    });
    const timer = only(t.timers);
    expect(timer).toMatchObject({
      activityId: 'overdue',
      waitingAt: 'completedOrOverdue',
      dueAt: later(MIN + 14 * 24 * HOUR),
    });
    expect(only(t.executions)).toMatchObject({
      activityId: 'completedOrOverdue',
      status: 'WAITING_EVENT',
      waitingFor: null,
      jobId: null,
      gatewayWaits: [{ messageName: 'TaskCompleted', correlationKey: 'C-1', activityId: 'waitForCompletion' }],
      timerIds: [timer.id],
    });
  });

  test('the message wins: its branch goes on, the timer branch is cancelled', () => {
    const t = atGateway();
    const done = deliverMessage(
      paths,
      {},
      { ...stateOf(t), point: only(t.subscribe) },
      { items: 3 },
      later(HOUR),
      'inbox-1',
    );
    expect(only(done.unsubscribe)).toMatchObject({ activityId: 'waitForCompletion', gatewayId: 'completedOrOverdue' });
    expect(done.cancelTimers).toEqual([only(t.timers).id]);
    expect(only(done.jobs).activityId).toBe('settle');
    expect(only(done.executions)).toMatchObject({ activityId: 'settle', gatewayWaits: [], timerIds: [] });
    expect(done.instance).toMatchObject({ variables: { items: 3 }, correlatedMessages: ['inbox-1'] });
  });

  test('the timer wins: its branch goes on, the message branch is unsubscribed', () => {
    const t = atGateway();
    const overdue = fire(paths, t, only(t.timers));
    expect(only(overdue.unsubscribe)).toMatchObject({
      activityId: 'waitForCompletion',
      gatewayId: 'completedOrOverdue',
      correlationKey: 'C-1',
    });
    expect(overdue.cancelTimers).toEqual([]);
    expect(only(overdue.jobs).activityId).toBe('escalate');
    expect(overdue.timer.status).toBe('FIRED');
  });

  test('a message for a gateway token needs the point it matched, and only one of its own', () => {
    const t = atGateway();
    const point = only(t.subscribe);
    expect(() => deliverMessage(paths, {}, stateOf(t), {}, later(HOUR))).toThrow('name the waiting point');
    const other: WaitingPoint = { ...point, activityId: 'overdue' };
    expect(() => deliverMessage(paths, {}, { ...stateOf(t), point: other }, {}, later(HOUR))).toThrow(
      'does not wait at overdue',
    );
    expect(() =>
      deliverMessage(paths, {}, { ...stateOf(t), point: { ...point, gatewayId: 'elsewhere' } }, {}, later(HOUR)),
    ).toThrow('does not wait at');
  });

  test.each<[string, Record<string, unknown>, string, string]>([
    [
      'no correlation key',
      { handOverDeadline: 'PT1M' },
      'MISSING_CORRELATION_KEY',
      'variable caseId must be a non-empty string or a number to wait for TaskCompleted (branch waitForCompletion)',
    ],
    [
      'a bad deadline',
      { caseId: 'C-1', completionDeadline: 'P1M' },
      'INVALID_TIMER',
      'timer overdue: variable completionDeadline: duration "P1M" has years or months, whose length depends on the calendar: use weeks or days (P30D)',
    ],
  ])('the gateway with %s: an incident, and no branch set at all', (_name, variables, reason, message) => {
    const t = atGateway(variables);
    expect(t.subscribe).toEqual([]);
    expect(t.timers).toEqual([]);
    expect(only(t.instance.incidents)).toMatchObject({ reason, activityId: 'completedOrOverdue', message });
    expect(only(t.executions)).toMatchObject({ status: 'ACTIVE', activityId: 'completedOrOverdue' });
  });

  test('repairs: moving or cancelling a gateway token removes every branch', () => {
    const t = atGateway();
    for (const repaired of [
      placeToken(paths, {}, stateOf(t), 'escalate', later(HOUR)),
      cancelToken(stateOf(t), later(HOUR)),
    ]) {
      expect(only(repaired.unsubscribe)).toMatchObject({
        gatewayId: 'completedOrOverdue',
        activityId: 'waitForCompletion',
      });
      expect(repaired.cancelTimers).toEqual([only(t.timers).id]);
    }
    const placed = placeToken(paths, {}, stateOf(t), 'completedOrOverdue', later(HOUR));
    // Re-entered: new points and a new timer (the step moved on, so the timer id is new).
    expect(only(placed.subscribe)).toMatchObject({ gatewayId: 'completedOrOverdue' });
    expect(only(placed.timers).id).not.toBe(only(t.timers).id);
    expect(placed.cancelTimers).toEqual([only(t.timers).id]);
  });

  test('a failed job keeps the task deadline: the timer can still take the token on', () => {
    const started = start(paths, { caseId: 'C-1' });
    const failed = failJob({ ...stateOf(started), job: only(started.jobs) }, 'down', later(MIN));
    expect(failed.cancelTimers).toEqual([]);
    expect(only(failed.executions).timerIds).toEqual([only(started.timers).id]);
    expect(only(fire(paths, failed, only(started.timers)).jobs).activityId).toBe('escalate');
  });
});

describe('stale timers and starts', () => {
  test('timerIsLive: PENDING, listed by the token, at the step that set it; fireTimer refuses anything else', () => {
    const started = start(paths, { caseId: 'C-1' });
    const timer = only(started.timers);
    const { execution } = stateOf(started);
    expect(timerIsLive(execution, timer)).toBe(true);
    const stale: Array<[string, ExecutionState, TimerState]> = [
      ['fired', execution, { ...timer, status: 'FIRED' }],
      ['not listed', { ...execution, timerIds: [] }, timer],
      ['another step', { ...execution, step: execution.step + 1 }, timer],
      ['another token', { ...execution, id: 'e-2' }, timer],
      ['ended', { ...execution, status: 'ENDED' }, timer],
    ];
    for (const [name, e, tm] of stale) {
      expect([name, timerIsLive(e, tm)]).toEqual([name, false]);
      expect(() =>
        fireTimer(paths, {}, { instance: started.instance, execution: e, timer: tm, tokens: { [e.id]: e } }, t0),
      ).toThrow('is not one token');
    }
  });

  test('startInstance at a named start event; a non-start node is refused', () => {
    expect(
      startInstance(
        paths,
        {},
        { instanceId: 'i', executionId: 'e', businessKey: 'k', variables: {}, now: t0, startEventId: 'start' },
      ).jobs,
    ).toHaveLength(1);
    expect(() =>
      startInstance(
        paths,
        {},
        { instanceId: 'i', executionId: 'e', businessKey: 'k', variables: {}, now: t0, startEventId: 'escalate' },
      ),
    ).toThrow('not a start event');
    expect(() =>
      startInstance(
        { ...paths, startEventId: null },
        {},
        { instanceId: 'i', executionId: 'e', businessKey: 'k', variables: {}, now: t0 },
      ),
    ).toThrow('has no none start event');
  });
});
