/**
 * A token reaching a node where it waits: an async task (a job, and a timer
 * per boundary event), a message wait (a waiting point, and the receive
 * task's boundary timers), a timer catch event (a timer) or an event-based
 * gateway (a point per message branch, a timer per timer branch). All of a
 * node's points and timers are made, or none: a timer that cannot be
 * resolved or a missing correlation key stops the token with an incident.
 */
import type {
  BoundaryTimerNode,
  CallActivityNode,
  MessageThrowNode,
  EventBasedGatewayNode,
  MessageWaitNode,
  SubProcessNode,
  TaskNode,
  TimerCatchNode,
  UserTaskNode,
} from '../bpmn/model';
import { resolveTimer } from '../bpmn/timer';
import { calledInstanceId, jobId, timerId, userTaskId } from './ids';
import { node, raise, type Run, targetOf, update } from './run';
import { MAX_CALL_DEPTH } from './state';
import { inputsOver, waitKey } from './expressions';
import type { ExecutionState, GatewayWait, JobState, TimerState, UserTaskState, WaitingPoint } from './state';

/** The first timer of a timer event, set now by a token at `waitingAt`; an error text when it cannot be resolved. */
export function newTimer(
  run: Run,
  execution: ExecutionState,
  event: Pick<TimerCatchNode | BoundaryTimerNode, 'id' | 'timer'>,
  waitingAt: string,
): TimerState | string {
  const resolved = resolveTimer(event.timer, run.instance.variables, run.now);
  if (typeof resolved === 'string') return `timer ${event.id}: ${resolved}`;
  return {
    id: timerId(execution.id, execution.step, event.id, 1),
    processInstanceId: run.instance.id,
    executionId: execution.id,
    activityId: event.id,
    waitingAt,
    step: execution.step,
    dueAt: resolved.dueAt,
    occurrence: 1,
    repetitionsLeft: resolved.repetitionsLeft,
    intervalMs: resolved.intervalMs,
    status: 'PENDING',
    createdAt: run.now,
    firedAt: null,
  };
}

/** The timers of the timer boundary events on a task or subprocess, or the first error. */
export function boundaryTimers(
  run: Run,
  execution: ExecutionState,
  task: TaskNode | MessageWaitNode | UserTaskNode | SubProcessNode | CallActivityNode,
): TimerState[] | string {
  const timers: TimerState[] = [];
  for (const id of task.boundaryEventIds) {
    const event = node(run.model, id);
    if (event.kind === 'boundaryError' || event.kind === 'boundaryMessage' || event.kind === 'boundaryEscalation')
      continue;
    if (event.kind !== 'boundaryTimer') throw new Error(`boundary event ${id} of ${task.id} is a ${event.kind}`);
    const timer = newTimer(run, execution, event, task.id);
    if (typeof timer === 'string') return timer;
    timers.push(timer);
  }
  return timers;
}

/** `timerIds` only when there are some: tokens without timers keep the shape they had before timers existed. */
export const withTimers = (timers: readonly TimerState[]): Partial<ExecutionState> =>
  timers.length === 0 ? {} : { timerIds: timers.map((t) => t.id) };

/**
 * What waits beside a token at an activity: the timers of its timer
 * boundary events and a standby point per message boundary event, set up
 * now; returns the token's fields for them (`timerIds`, `boundaryWaits`), or
 * null after raising the incident that stops the token (a timer that cannot
 * be resolved, a boundary message's missing correlation key).
 */
export function armBoundaries(
  run: Run,
  execution: ExecutionState,
  activity: TaskNode | MessageWaitNode | UserTaskNode | SubProcessNode | CallActivityNode,
): Partial<ExecutionState> | null {
  const timers = boundaryTimers(run, execution, activity);
  if (typeof timers === 'string') {
    raise(run, execution, 'INVALID_TIMER', timers);
    return null;
  }
  const waits: GatewayWait[] = [];
  for (const id of activity.boundaryEventIds) {
    const event = node(run.model, id);
    if (event.kind !== 'boundaryMessage') continue;
    const found = waitKey(event, run.instance.variables, ` (boundary event ${event.id})`);
    if (!('key' in found)) {
      raise(run, execution, found.reason, found.message);
      return null;
    }
    waits.push({ messageName: event.messageName, correlationKey: found.key, activityId: event.id });
  }
  run.timers.push(...timers);
  run.subscribe.push(
    ...waits.map((w): WaitingPoint => ({
      ...w,
      processInstanceId: run.instance.id,
      executionId: execution.id,
      boundaryOf: activity.id,
      standby: true,
      createdAt: run.now,
    })),
  );
  return { ...withTimers(timers), ...(waits.length === 0 ? {} : { boundaryWaits: waits }) };
}

export function waitAtAsyncTask(run: Run, execution: ExecutionState, task: TaskNode | MessageThrowNode): void {
  const armed = 'boundaryEventIds' in task ? armBoundaries(run, execution, task) : {};
  if (armed === null) return;
  const job: JobState = {
    id: jobId(execution.id, execution.step),
    processInstanceId: run.instance.id,
    executionId: execution.id,
    activityId: task.id,
    ...(task.job === undefined ? {} : { taskType: task.job.type }),
    ...(task.job?.retries === undefined ? {} : { maxAttempts: task.job.retries }),
    status: 'PENDING',
    attempts: 0,
    lastError: null,
    createdAt: run.now,
    finishedAt: null,
  };
  run.jobs.push(job);
  update(run, execution, { status: 'WAITING_JOB', jobId: job.id, ...armed });
}

/** A user task: an OPEN user task for a person, and its boundary timers; the token waits WAITING_USER. */
export function waitAtUserTask(run: Run, execution: ExecutionState, task: UserTaskNode): void {
  const armed = armBoundaries(run, execution, task);
  if (armed === null) return;
  const userTask: UserTaskState = {
    id: userTaskId(execution.id, execution.step),
    processInstanceId: run.instance.id,
    processKey: run.instance.processKey,
    businessKey: run.instance.businessKey,
    executionId: execution.id,
    activityId: task.id,
    name: task.name,
    step: execution.step,
    assignee: task.assignee,
    candidateGroups: task.candidateGroups,
    ...(task.candidateUsers === undefined ? {} : { candidateUsers: task.candidateUsers }),
    formKey: task.formKey,
    status: 'OPEN',
    createdAt: run.now,
    closedAt: null,
    completedBy: null,
    completionRequestId: null,
    cancelReason: null,
  };
  run.userTasks.push(userTask);
  update(run, execution, { status: 'WAITING_USER', userTaskId: userTask.id, ...armed });
}

/**
 * A call activity: its boundary events are armed and an instance of the
 * called process is started (the store does it in the same transaction),
 * with a copy of the caller's variables and business key; the token waits
 * WAITING_CALL. The child's id derives from the token and its step.
 */
export function waitAtCall(run: Run, execution: ExecutionState, call: CallActivityNode): void {
  const depth = (run.instance.calledBy?.depth ?? 0) + 1;
  if (depth > MAX_CALL_DEPTH)
    return raise(
      run,
      execution,
      'STEP_LIMIT',
      `call activity ${call.id} would start a call ${depth} levels deep (at most ${MAX_CALL_DEPTH}): does ${call.calledProcess} call itself before any wait?`,
    );
  // zeebe:ioMapping inputs: the child starts with the caller's variables and the inputs laid over them.
  const start = inputsOver(call.io, run.instance.variables, call.id);
  if (!('values' in start)) return raise(run, execution, start.reason, start.message);
  const armed = armBoundaries(run, execution, call);
  if (armed === null) return;
  const childId = calledInstanceId(run.instance.id, execution.id, execution.step);
  run.calls.push({
    instanceId: childId,
    processKey: call.calledProcess,
    businessKey: run.instance.businessKey,
    variables: start.values,
    calledBy: { instanceId: run.instance.id, executionId: execution.id, activityId: call.id, depth },
  });
  update(run, execution, { status: 'WAITING_CALL', calledInstanceId: childId, ...armed });
}

export function waitForMessage(run: Run, execution: ExecutionState, wait: MessageWaitNode): void {
  const found = waitKey(wait, run.instance.variables);
  if (!('key' in found)) return raise(run, execution, found.reason, found.message);
  const key = found.key;
  const armed = armBoundaries(run, execution, wait);
  if (armed === null) return;
  const point: WaitingPoint = {
    messageName: wait.messageName,
    correlationKey: key,
    processInstanceId: run.instance.id,
    executionId: execution.id,
    activityId: wait.id,
    createdAt: run.now,
  };
  run.subscribe.push(point);
  update(run, execution, {
    status: 'WAITING_MESSAGE',
    waitingFor: { messageName: wait.messageName, correlationKey: key },
    ...armed,
  });
}

export function waitForTimer(run: Run, execution: ExecutionState, event: TimerCatchNode): void {
  const timer = newTimer(run, execution, event, event.id);
  if (typeof timer === 'string') return raise(run, execution, 'INVALID_TIMER', timer);
  run.timers.push(timer);
  update(run, execution, { status: 'WAITING_TIMER', timerIds: [timer.id] });
}

export function waitAtGateway(run: Run, execution: ExecutionState, gateway: EventBasedGatewayNode): void {
  const waits: GatewayWait[] = [];
  const timers: TimerState[] = [];
  for (const flowId of gateway.outgoing) {
    const branch = node(run.model, targetOf(run.model, flowId));
    if (branch.kind === 'messageCatchEvent') {
      const found = waitKey(branch, run.instance.variables, ` (branch ${branch.id})`);
      if (!('key' in found)) return raise(run, execution, found.reason, found.message);
      waits.push({ messageName: branch.messageName, correlationKey: found.key, activityId: branch.id });
    } else if (branch.kind === 'timerCatchEvent') {
      const timer = newTimer(run, execution, branch, gateway.id);
      if (typeof timer === 'string') return raise(run, execution, 'INVALID_TIMER', timer);
      timers.push(timer);
    } else {
      throw new Error(`branch ${branch.id} of event-based gateway ${gateway.id} is a ${branch.kind}`);
    }
  }
  run.subscribe.push(
    ...waits.map((w) => ({
      ...w,
      processInstanceId: run.instance.id,
      executionId: execution.id,
      gatewayId: gateway.id,
      createdAt: run.now,
    })),
  );
  run.timers.push(...timers);
  update(run, execution, { status: 'WAITING_EVENT', gatewayWaits: waits, ...withTimers(timers) });
}
