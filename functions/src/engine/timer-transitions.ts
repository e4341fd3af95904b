/**
 * A timer fires: the pure transition (the store's fire-timer.ts runs it in
 * the transaction that finds the timer PENDING and its token still waiting
 * with it). Pure, like the rest of the core (transitions.ts).
 */
import type { BoundaryTimerNode, ProcessModel } from '../bpmn/model';
import { enter, leaveFrom, moveAll } from './enter';
import { cancelInside, fireTrigger, type Move, notTaken } from './scopes';
import { executionId, timerId } from './ids';
import {
  addIncident,
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
import type { ExecutionState, InstanceState, TimerState, Transition } from './state';

/**
 * Whether `timer` may still fire for `execution`: PENDING, and the token is
 * still at the step that set it and still lists it. Anything else is a
 * stale timer (its token moved on, was repaired or ended).
 */
export function timerIsLive(execution: ExecutionState, timer: TimerState): boolean {
  const alive = execution.status !== 'ENDED' && execution.status !== 'CANCELLED' && execution.status !== 'ACTIVE';
  return (
    alive &&
    timer.status === 'PENDING' &&
    timer.executionId === execution.id &&
    execution.step === timer.step &&
    (execution.timerIds ?? []).includes(timer.id)
  );
}

/** The next firing of a cycle, one interval after the previous one was due (not after it fired: a late firing does not shift the plan); null when spent. */
export function nextOccurrence(timer: TimerState, now: Date): TimerState | null {
  if (timer.repetitionsLeft <= 0 || timer.intervalMs === null) return null;
  const occurrence = timer.occurrence + 1;
  return {
    ...timer,
    id: timerId(timer.executionId, timer.step, timer.activityId, occurrence),
    dueAt: new Date(timer.dueAt.getTime() + timer.intervalMs),
    occurrence,
    repetitionsLeft: timer.repetitionsLeft - 1,
    status: 'PENDING',
    createdAt: now,
    firedAt: null,
  };
}

/** A non-interrupting boundary timer: a new token takes the event's flow; the task's token stays, with the cycle's next timer if any. */
function spawn(run: Run, execution: ExecutionState, timer: TimerState, event: BoundaryTimerNode): void {
  const next = nextOccurrence(timer, run.now);
  const others = (execution.timerIds ?? []).filter((id) => id !== timer.id);
  if (next !== null) run.timers.push(next);
  update(run, execution, { timerIds: next === null ? others : [...others, next.id] });
  // The new token runs where the task (or subprocess) the event is on stands: in the same scope.
  const token = newToken(run, executionId(run.instance.id, `timer:${timer.id}`), event.id, execution.parentId);
  if (token === null) return notTaken(run, execution.id, event.id);
  enter(run, token, event.id);
}

/**
 * An event subprocess's timer start: it runs. Interrupting: the trigger
 * token runs it. Non-interrupting: a new token runs it, and the trigger
 * waits for the cycle's next firing, or ends when the timer is spent.
 */
function startedByTimer(run: Run, trigger: ExecutionState, timer: TimerState): void {
  const queue: Move[] = [];
  const event = node(run.model, trigger.activityId);
  if (event.kind === 'eventSubProcess' && !event.interrupting) {
    const next = nextOccurrence(timer, run.now);
    if (next !== null) run.timers.push(next);
    const waiting = update(run, trigger, { timerIds: next === null ? [] : [next.id] });
    fireTrigger(run, waiting, `timer:${timer.id}`, queue);
    if (next === null) end(run, waiting, 'ENDED');
  } else {
    fireTrigger(run, update(run, trigger, { timerIds: [] }), `timer:${timer.id}`, queue);
  }
  moveAll(run, queue);
}

/**
 * A timer is due and its token still waits with it ({@link timerIsLive};
 * the caller checks, this throws otherwise). By the timer's event:
 * - a timer catch event, alone or a branch of the event-based gateway the
 *   token waits at: the token moves on through it; the gateway's other
 *   branches (points and timers) are removed;
 * - an interrupting boundary timer: the token leaves its task through the
 *   boundary event; the task's other timers and a receive task's waiting
 *   point go, and its job, still PENDING, will find itself stale;
 * - a non-interrupting one: a new token takes the boundary event's flow,
 *   the first one stays at its task (with a cycle's next timer).
 * Returns the fired timer (FIRED, `firedAt`) beside the transition.
 */
export function fireTimer(
  model: ProcessModel,
  sync: Readonly<Record<string, SyncHandler>>,
  state: {
    instance: InstanceState;
    execution: ExecutionState;
    timer: TimerState;
    tokens: Readonly<Record<string, ExecutionState>>;
  },
  now: Date,
): Transition & { readonly timer: TimerState } {
  const { execution, timer } = state;
  if (!timerIsLive(execution, timer))
    throw new Error(`timer ${timer.id} is not one token ${execution.id} waits with now`);
  const run = newRun(model, sync, { ...state.instance, updatedAt: now }, now, state.tokens);
  const event = node(model, timer.activityId);
  if (event.kind === 'timerCatchEvent') {
    leaveFrom(run, release(run, execution, { timerId: timer.id }), event.id);
  } else if (event.kind === 'boundaryTimer' && event.cancelActivity) {
    const reason = `boundary timer ${event.id} fired`;
    // On a subprocess: everything inside it ends first.
    if (execution.status === 'WAITING_SCOPE') cancelInside(run, execution.id, reason);
    enter(run, release(run, execution, { timerId: timer.id, reason }), event.id);
  } else if (event.kind === 'boundaryTimer') {
    spawn(run, execution, timer, event);
  } else if (event.kind === 'eventSubProcess') {
    startedByTimer(run, execution, timer);
  } else {
    throw new Error(`timer ${timer.id} belongs to ${event.kind} ${event.id}, not a timer event`);
  }
  return { ...finish(run), timer: { ...timer, status: 'FIRED', firedAt: now } };
}

/**
 * A due timer's firing could not be applied (its transition threw: a
 * StepFailedError, `message`): the timer goes, so nothing fires it again,
 * and a STEP_FAILED incident says why. The token waits on for whatever
 * else it waits for; one left with nothing that could move it (a timer
 * catch event, a gateway of timers only) stops there instead, so the
 * incident cannot be resolved before a repair moves or cancels it.
 */
export function timerFailed(
  state: {
    instance: InstanceState;
    execution: ExecutionState;
    timer: TimerState;
    tokens: Readonly<Record<string, ExecutionState>>;
  },
  message: string,
  now: Date,
): Transition {
  const { execution, timer } = state;
  const run = newRun(NO_MODEL, {}, { ...state.instance, updatedAt: now }, now, state.tokens);
  run.cancelTimers.push(timer.id);
  const left = update(run, execution, { timerIds: (execution.timerIds ?? []).filter((id) => id !== timer.id) });
  const text = `timer ${timer.id} of ${timer.activityId} could not fire: ${message}`;
  const stuck =
    left.status === 'WAITING_TIMER' ||
    (left.status === 'WAITING_EVENT' && (left.gatewayWaits ?? []).length === 0 && (left.timerIds ?? []).length === 0);
  if (stuck) raise(run, release(run, left, { reason: text }), 'STEP_FAILED', text);
  else addIncident(run, 'STEP_FAILED', execution.id, timer.activityId, `${text}; the token waits on without it`);
  return finish(run);
}
