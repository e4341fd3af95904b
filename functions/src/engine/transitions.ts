import { leaveFrom, enter, moveAll } from './enter';
import { armTriggers, cancelInside, fireTrigger, leaveScopeIfDone, type Move, notTaken, throwError } from './scopes';
import { executionId } from './ids';
import {
  end,
  finish,
  newRun,
  newToken,
  NO_MODEL,
  node,
  raise,
  release,
  type Run,
  type SyncHandler,
  update,
} from './run';
import {
  type CallerRef,
  CORRELATED_MESSAGES_KEPT,
  type ExecutionState,
  type InstanceState,
  type JobState,
  type Transition,
  type UserTaskState,
  type WaitingPoint,
} from './state';
import type { ProcessModel } from '../bpmn/model';
import { resultInto } from './expressions';

/**
 * The engine core: pure functions from state to a Transition. No I/O, no
 * clock (time comes in as `now`), so Firestore may run them as often as it
 * retries a transaction. Timer firings are in timer-transitions.ts, the
 * incident decision in incidents.ts.
 *
 * Each takes the instance, the token it moves and the instance's stored
 * `tokens` (the instance document's): a parallel join, a subprocess and a
 * terminate end event act on the other tokens.
 */

/** The state a transition starts from. */
interface TokenState {
  readonly instance: InstanceState;
  readonly execution: ExecutionState;
  /**
   * Every token of the instance as stored (by id), the moved one included:
   * required, because a join, a scope and a terminate end event act on the
   * others, and a caller that left them out would make them wait for tokens
   * they cannot see.
   */
  readonly tokens: Readonly<Record<string, ExecutionState>>;
}

export interface StartInput {
  readonly instanceId: string;
  readonly executionId: string;
  readonly businessKey: string;
  readonly variables: Readonly<Record<string, unknown>>;
  readonly now: Date;
  /** The start event the token starts at (a message start event's id); default: the model's none start event. */
  readonly startEventId?: string;
  /** The call activity that starts it; absent for a top-level instance. */
  readonly calledBy?: CallerRef;
}

/** A new instance with one token at the start event, run until it waits. */
export function startInstance(
  model: ProcessModel,
  sync: Readonly<Record<string, SyncHandler>>,
  input: StartInput,
): Transition {
  const startEventId = input.startEventId ?? model.startEventId;
  if (startEventId === null) throw new Error(`process ${model.key} has no none start event`);
  const kind = node(model, startEventId).kind;
  if (kind !== 'startEvent' && kind !== 'messageStartEvent' && kind !== 'timerStartEvent')
    throw new Error(`${startEventId} is a ${kind}, not a start event of ${model.key}`);
  const instance: InstanceState = {
    id: input.instanceId,
    processKey: model.key,
    processVersion: model.version,
    businessKey: input.businessKey,
    status: 'RUNNING',
    variables: input.variables,
    activeExecutionIds: [input.executionId],
    incidents: [],
    ...(input.calledBy === undefined ? {} : { calledBy: input.calledBy }),
    createdAt: input.now,
    updatedAt: input.now,
    completedAt: null,
  };
  const run = newRun(model, sync, instance, input.now);
  const execution: ExecutionState = {
    id: input.executionId,
    processInstanceId: instance.id,
    activityId: startEventId,
    status: 'ACTIVE',
    step: 0,
    jobId: null,
    waitingFor: null,
    createdAt: input.now,
    updatedAt: input.now,
  };
  // The process's message and timer event subprocesses wait in standby from the start.
  armTriggers(run, null);
  enter(run, execution, startEventId);
  return finish(run);
}

/**
 * A job finished: merge its result and move its token on; the task's
 * boundary timers are cancelled. The caller checks the job is PENDING and
 * the token waits for it.
 */
export function completeJob(
  model: ProcessModel,
  sync: Readonly<Record<string, SyncHandler>>,
  state: TokenState & { job: JobState },
  result: Readonly<Record<string, unknown>>,
  now: Date,
): Transition & { readonly job: JobState } {
  // zeebe:ioMapping outputs: only they come back; a failed one stops the token here.
  const merged = resultInto(
    model.nodes[state.job.activityId]?.io,
    state.instance.variables,
    result,
    state.job.activityId,
  );
  const variables = 'values' in merged ? merged.values : state.instance.variables;
  const run = newRun(model, sync, { ...state.instance, variables, updatedAt: now }, now, state.tokens);
  const released = release(run, state.execution, { jobId: state.job.id });
  if ('values' in merged) leaveFrom(run, released, released.activityId);
  else raise(run, released, merged.reason, merged.message);
  return { ...finish(run), job: { ...state.job, status: 'DONE', finishedAt: now } };
}

/** The node a message moves a token on from: its message wait, or the catch event of the gateway branch `point` names. */
function messageBranch(execution: ExecutionState, point: WaitingPoint | undefined): string {
  if (execution.status === 'WAITING_MESSAGE' && execution.waitingFor !== null) return execution.activityId;
  if (execution.status === 'WAITING_EVENT') {
    if (point === undefined)
      throw new Error(
        `execution ${execution.id} waits at event-based gateway ${execution.activityId}: name the waiting point the message matched`,
      );
    if (
      point.gatewayId !== execution.activityId ||
      !(execution.gatewayWaits ?? []).some((w) => w.activityId === point.activityId)
    ) {
      throw new Error(`execution ${execution.id} does not wait at ${point.activityId}`);
    }
    return point.activityId;
  }
  throw new Error(`execution ${execution.id} does not wait for a message`);
}

/**
 * Whether a message at `point` adds a token to the instance rather than
 * moving the one that waits: a non-interrupting event subprocess's start
 * or a non-interrupting message boundary event. The store refuses such a
 * delivery to an instance that holds MAX_LIVE_TOKENS already.
 */
export function deliveryAddsToken(model: ProcessModel, execution: ExecutionState, point: WaitingPoint): boolean {
  if (execution.trigger === true) {
    const esp = model.nodes[execution.activityId];
    return esp?.kind === 'eventSubProcess' && !esp.interrupting;
  }
  if (point.boundaryOf === undefined) return false;
  const event = model.nodes[point.activityId];
  return event?.kind === 'boundaryMessage' && !event.cancelActivity;
}

/**
 * A message reached a waiting token: merge its variables, drop the token's
 * waiting points and timers (a receive task's boundary timers, the other
 * branches of its event-based gateway), move on. A token at an event-based
 * gateway needs the `point` the message matched: it tells the branch.
 * `messageId` (the inbox id) is appended to the instance's audit trail
 * `correlatedMessages`.
 */
export function deliverMessage(
  model: ProcessModel,
  sync: Readonly<Record<string, SyncHandler>>,
  state: TokenState & { point?: WaitingPoint },
  variables: Readonly<Record<string, unknown>>,
  now: Date,
  messageId: string | null = null,
): Transition {
  const { execution, instance } = state;
  const audit =
    messageId === null
      ? {}
      : { correlatedMessages: [...(instance.correlatedMessages ?? []), messageId].slice(-CORRELATED_MESSAGES_KEPT) };
  const point = state.point;
  // A message wait's zeebe:ioMapping outputs, over its message (the only waits the parser lets have them).
  const wait = execution.trigger === true || point?.boundaryOf !== undefined ? null : messageBranch(execution, point);
  const merged = resultInto(
    wait === null ? undefined : model.nodes[wait]?.io,
    instance.variables,
    variables,
    wait ?? '',
  );
  const run = newRun(
    model,
    sync,
    { ...instance, variables: 'values' in merged ? merged.values : instance.variables, ...audit, updatedAt: now },
    now,
    state.tokens,
  );
  if (!('values' in merged)) {
    raise(run, release(run, execution), merged.reason, merged.message);
    return finish(run);
  }
  if (execution.trigger === true) {
    // An event subprocess's message start: it runs (a non-interrupting one beside the rest, the trigger waiting on).
    const queue: Move[] = [];
    fireTrigger(run, execution, `message:${messageId ?? String(run.instance.correlatedMessages?.length ?? 0)}`, queue);
    moveAll(run, queue);
  } else if (point?.boundaryOf !== undefined) {
    boundaryMessage(run, execution, point, messageId);
  } else {
    leaveFrom(run, release(run, execution), wait ?? messageBranch(execution, point));
  }
  return finish(run);
}

/**
 * A message for a message boundary event on the activity the token waits
 * at. Interrupting: everything inside a subprocess ends, the token leaves
 * through the event. Non-interrupting: a new token (its id from the token,
 * the event and the message) takes the event's flow; the first keeps
 * waiting, for this message too.
 */
function boundaryMessage(run: Run, execution: ExecutionState, point: WaitingPoint, messageId: string | null): void {
  const event = node(run.model, point.activityId);
  if (event.kind !== 'boundaryMessage' || !(execution.boundaryWaits ?? []).some((w) => w.activityId === event.id))
    throw new Error(`execution ${execution.id} does not wait for boundary event ${point.activityId}`);
  if (event.cancelActivity) {
    const reason = `message boundary event ${event.id}`;
    if (execution.status === 'WAITING_SCOPE') cancelInside(run, execution.id, reason);
    return enter(run, release(run, execution, { reason }), event.id);
  }
  const seed = messageId ?? String(run.instance.correlatedMessages?.length ?? 0);
  const id = executionId(run.instance.id, `message:${execution.id}:${event.id}:${seed}`);
  const token = newToken(run, id, event.id, execution.parentId);
  if (token === null) return notTaken(run, execution.id, event.id);
  enter(run, token, event.id);
}

/** Who completes a user task: the actor and the request id that makes a repeated completion the same one. */
export interface Completion {
  readonly by: string;
  readonly requestId: string;
}

/**
 * A person completed a user task: its variables are merged, the task's
 * boundary timers go and the token moves on. The caller checks the task is
 * OPEN and its token waits for it (this throws otherwise). Returns the task
 * COMPLETED beside the transition.
 */
export function completeUserTask(
  model: ProcessModel,
  sync: Readonly<Record<string, SyncHandler>>,
  state: TokenState & { userTask: UserTaskState },
  variables: Readonly<Record<string, unknown>>,
  completion: Completion,
  now: Date,
): Transition & { readonly userTask: UserTaskState } {
  const { execution, userTask } = state;
  if (execution.status !== 'WAITING_USER' || execution.userTaskId !== userTask.id || userTask.status !== 'OPEN')
    throw new Error(`token ${execution.id} does not wait for user task ${userTask.id}`);
  const merged = resultInto(
    model.nodes[execution.activityId]?.io,
    state.instance.variables,
    variables,
    execution.activityId,
  );
  const run = newRun(
    model,
    sync,
    { ...state.instance, variables: 'values' in merged ? merged.values : state.instance.variables, updatedAt: now },
    now,
    state.tokens,
  );
  const released = release(run, execution, { userTaskId: userTask.id });
  if ('values' in merged) leaveFrom(run, released, execution.activityId);
  else raise(run, released, merged.reason, merged.message);
  return {
    ...finish(run),
    userTask: {
      ...userTask,
      status: 'COMPLETED',
      closedAt: now,
      completedBy: completion.by,
      completionRequestId: completion.requestId,
    },
  };
}

/**
 * An async step's handler threw a BPMN error `code`: the nearest error
 * boundary event that catches it (on the task, then on each enclosing
 * subprocess) takes the token, and the job is DONE with the error as
 * `lastError`; nothing catches it: the job is FAILED and the instance shows
 * an UNCAUGHT_ERROR incident naming the code, the token stays at the task
 * (with its timers) for a repair, as for a failed job.
 */
export function jobThrewError(
  model: ProcessModel,
  sync: Readonly<Record<string, SyncHandler>>,
  state: TokenState & { job: JobState },
  code: string,
  message: string,
  now: Date,
): Transition & { readonly job: JobState; readonly caught: boolean } {
  const error = `BPMN error ${code}: ${message}`;
  const run = newRun(model, sync, { ...state.instance, updatedAt: now }, now, state.tokens);
  // The job ends here either way: its token is released without it, then thrown from the task.
  const thrower = update(run, release(run, state.execution, { jobId: state.job.id }), {
    status: 'ACTIVE',
    jobId: null,
  });
  const queue: Move[] = [];
  if (throwError(run, thrower, code, true, queue)) {
    moveAll(run, queue);
    return { ...finish(run), job: { ...state.job, status: 'DONE', lastError: error, finishedAt: now }, caught: true };
  }
  const failed = newRun(NO_MODEL, {}, state.instance, now, state.tokens);
  raise(
    failed,
    state.execution,
    'UNCAUGHT_ERROR',
    `BPMN error ${code} thrown at ${state.job.activityId} is caught by no error boundary event: ${message}`,
  );
  update(failed, failed.executions.get(state.execution.id) ?? state.execution, {
    status: 'WAITING_JOB',
    jobId: state.job.id,
  });
  return {
    ...finish(failed),
    job: { ...state.job, status: 'FAILED', lastError: error, finishedAt: now },
    caught: false,
  };
}

/**
 * An async step failed for good: the job is FAILED and the instance shows an
 * incident. The token keeps its boundary timers: the task's deadline still
 * holds while it waits for a repair.
 */
export function failJob(
  state: TokenState & { job: JobState },
  error: string,
  now: Date,
): Transition & { readonly job: JobState } {
  const run = newRun(NO_MODEL, {}, state.instance, now, state.tokens);
  raise(run, state.execution, 'JOB_FAILED', `job ${state.job.id} at ${state.job.activityId} failed: ${error}`);
  // The token stays at the task, waiting for a repair (retry the job or move the token).
  update(run, run.executions.get(state.execution.id) ?? state.execution, {
    status: 'WAITING_JOB',
    jobId: state.job.id,
  });
  return { ...finish(run), job: { ...state.job, status: 'FAILED', lastError: error, finishedAt: now } };
}

const where = (scope: string | undefined): string =>
  scope === undefined ? 'at the process level' : `inside subprocess ${scope}`;

/**
 * Why a repair may not move `execution` to `activityId`, or null: a token
 * stays in its scope (a subprocess's tokens are its children), and a token
 * that is not live (new, ended or cancelled) goes to the process level only.
 */
export function moveRefusal(
  model: ProcessModel,
  execution: ExecutionState,
  activityId: string,
  active: readonly string[],
): string | null {
  const target = model.nodes[activityId];
  if (target === undefined) return `process ${model.key} has no activity ${activityId}`;
  const live = active.includes(execution.id);
  const from = model.nodes[execution.activityId];
  if (live && from !== undefined && from.scope !== target.scope)
    return `${activityId} is ${where(target.scope)} and token ${execution.id} is ${where(from.scope)}: move a token within its own scope, or move the subprocess's token`;
  if (!live && target.scope !== undefined)
    return `${activityId} is inside subprocess ${target.scope}: a new or ended token goes to the process level only`;
  return null;
}

/**
 * Repair: put a token at `activityId` (a new token when `execution` is null,
 * else the given one moved there; its waiting points and timers go) and run
 * it. The caller decides whether the resulting waiting point may duplicate
 * another (see the store's guard).
 */
export function placeToken(
  model: ProcessModel,
  sync: Readonly<Record<string, SyncHandler>>,
  state: TokenState,
  activityId: string,
  now: Date,
): Transition {
  node(model, activityId); // unknown activity: throws before anything changes
  const run = newRun(model, sync, state.instance, now, state.tokens);
  const refusal = moveRefusal(model, state.execution, activityId, run.instance.activeExecutionIds);
  if (refusal !== null) throw new Error(refusal);
  const reason = `a repair moved its token to ${activityId}`;
  // A subprocess's token takes everything inside with it, as when it is cancelled: moved, even back onto the
  // subprocess, it runs it afresh, never beside the old run.
  if (state.execution.status === 'WAITING_SCOPE') cancelInside(run, state.execution.id, reason);
  // A token that had ended or been cancelled is live again from here.
  const execution = update(run, release(run, state.execution, { reason }), { status: 'ACTIVE' });
  if (!run.instance.activeExecutionIds.includes(execution.id)) {
    run.instance = {
      ...run.instance,
      activeExecutionIds: [...run.instance.activeExecutionIds, execution.id],
      status: run.instance.status === 'COMPLETED' ? 'RUNNING' : run.instance.status,
      completedAt: null,
    };
  }
  enter(run, execution, activityId);
  return finish(run);
}

/**
 * Repair: end a token where it stands (its waiting points and timers go
 * with it; a subprocess's token, everything inside). With the model, the
 * last token inside a subprocess leaves the subprocess.
 */
export function cancelToken(
  state: TokenState,
  now: Date,
  model: ProcessModel = NO_MODEL,
  sync: Readonly<Record<string, SyncHandler>> = {},
): Transition {
  const run = newRun(model, sync, state.instance, now, state.tokens);
  const reason = 'a repair cancelled its token';
  // A subprocess's token takes everything inside with it.
  if (state.execution.status === 'WAITING_SCOPE') cancelInside(run, state.execution.id, reason);
  end(run, release(run, state.execution, { reason }), 'CANCELLED');
  // The last token inside a subprocess: the subprocess is left, as when it ends there; an inclusive join
  // that waited for this token goes on (moveAll checks them).
  if (model !== NO_MODEL) {
    const queue: Move[] = [];
    leaveScopeIfDone(run, state.execution.parentId, queue);
    moveAll(run, queue);
  }
  return finish(run);
}
