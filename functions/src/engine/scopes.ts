/**
 * Embedded subprocesses and BPMN errors in the pure core: entering a
 * subprocess (a scope token waits while its children run), leaving it when
 * the last child ends, ending everything inside it, and finding the error
 * boundary event that catches a thrown code. Pure, like the rest of the
 * core (transitions.ts).
 */
import type { BoundaryErrorNode, EventSubProcessNode, SubProcessNode } from '../bpmn/model';
import { executionId } from './ids';
import {
  end,
  liveTokens,
  newToken,
  noRoomFor,
  node,
  noteIncident,
  raise,
  release,
  type Run,
  targetOf,
  tokenOf,
  update,
} from './run';
import type { ExecutionState } from './state';
import { armBoundaries, newTimer } from './waits';
import { waitKey } from './expressions';

/** A token about to enter a node, by a flow (null: placed there by a start, a repair or a boundary event). */
export interface Move {
  readonly execution: ExecutionState;
  readonly nodeId: string;
  readonly via: string | null;
}

/**
 * A token enters a subprocess: it waits there (WAITING_SCOPE) with the
 * subprocess's boundary timers, and a child token (its id derived from the
 * scope token and its step) is queued at the subprocess's start event.
 */
export function enterScope(
  run: Run,
  execution: ExecutionState,
  sub: SubProcessNode | EventSubProcessNode,
  queue: Move[],
): void {
  // The token that runs inside: without room for it, the scope is not entered.
  const full = noRoomFor(run, 1);
  if (full !== null) return raise(run, execution, full.reason, `entering ${sub.id}: ${full.message}`);
  const armed = sub.kind === 'subProcess' ? armBoundaries(run, execution, sub) : {};
  if (armed === null) return;
  const scope = update(run, execution, { status: 'WAITING_SCOPE', ...armed });
  const child = newToken(
    run,
    executionId(run.instance.id, `scope:${scope.id}:${scope.step}`),
    sub.startEventId,
    scope.id,
  );
  if (child === null) throw new Error(`no room for the token inside ${sub.id} after room was found`);
  queue.push({ execution: child, nodeId: sub.startEventId, via: null });
  armTriggers(run, scope);
}

/**
 * When a scope starts (the process: `scope` null; a subprocess: its token),
 * each message or timer event subprocess drawn in it gets a standby trigger
 * token at the event subprocess: WAITING_MESSAGE with a standby point, or
 * WAITING_TIMER with its timer. Its id derives from the scope's token and
 * step, so a re-run makes the same one. A missing correlation key or a
 * timer that cannot be resolved is an incident on the trigger.
 */
export function armTriggers(run: Run, scope: ExecutionState | null): void {
  const scopeId = scope === null ? undefined : scope.activityId;
  for (const esp of Object.values(run.model.nodes)) {
    if (
      esp.kind !== 'eventSubProcess' ||
      esp.scope !== scopeId ||
      esp.trigger.kind === 'error' ||
      esp.trigger.kind === 'escalation'
    )
      continue;
    const id = executionId(run.instance.id, `trigger:${scope?.id ?? 'process'}:${scope?.step ?? 0}:${esp.id}`);
    const token = newToken(run, id, esp.id, scope?.id, { step: 1, trigger: true });
    if (token === null) {
      const full = noRoomFor(run, 1);
      noteIncident(
        run,
        full?.reason ?? 'TOKEN_LIMIT',
        scope?.id ?? id,
        esp.id,
        `${esp.id} does not wait: ${full?.message ?? 'no room'}`,
      );
      continue;
    }
    if (esp.trigger.kind === 'timer') {
      const timer = newTimer(run, token, { id: esp.id, timer: esp.trigger.timer }, esp.id);
      if (typeof timer === 'string') {
        raise(run, token, 'INVALID_TIMER', timer);
        continue;
      }
      run.timers.push(timer);
      update(run, token, { status: 'WAITING_TIMER', timerIds: [timer.id] });
      continue;
    }
    const { messageName } = esp.trigger;
    const found = waitKey(esp.trigger, run.instance.variables, ` (event subprocess ${esp.id})`);
    if (!('key' in found)) {
      raise(run, token, found.reason, found.message);
      continue;
    }
    const key = found.key;
    run.subscribe.push({
      messageName,
      correlationKey: key,
      processInstanceId: run.instance.id,
      executionId: token.id,
      activityId: esp.id,
      standby: true,
      createdAt: run.now,
    });
    update(run, token, { status: 'WAITING_MESSAGE', waitingFor: { messageName, correlationKey: key } });
  }
}

/**
 * A standby trigger's message or timer came (`seed` makes a non-interrupting
 * run's token id unique: the message's or the timer's id). Interrupting:
 * every other token of its scope ends (with what is inside them), and the
 * trigger token runs the event subprocess. Non-interrupting: a new token
 * runs it; the trigger keeps waiting (the caller re-arms a timer cycle).
 */
export function fireTrigger(run: Run, trigger: ExecutionState, seed: string, queue: Move[]): void {
  const esp = node(run.model, trigger.activityId);
  if (esp.kind !== 'eventSubProcess') throw new Error(`token ${trigger.id} is no trigger of an event subprocess`);
  if (esp.interrupting) {
    const reason = `event subprocess ${esp.id} started`;
    for (const token of liveTokens(run)) {
      if (token.id === trigger.id || token.parentId !== trigger.parentId) continue;
      if (token.status === 'WAITING_SCOPE') cancelInside(run, token.id, reason);
      end(run, release(run, token, { reason }), 'CANCELLED');
    }
    enterScope(
      run,
      update(run, release(run, trigger, { reason }), { trigger: undefined, status: 'ACTIVE' }),
      esp,
      queue,
    );
    return;
  }
  const id = executionId(run.instance.id, `event:${trigger.id}:${seed}`);
  const token = newToken(run, id, esp.id, trigger.parentId, { step: 1 });
  if (token === null) return notTaken(run, trigger.id, esp.id);
  enterScope(run, token, esp, queue);
}

/** A non-interrupting event found no room for the token it would start: noted once, the rest goes on. */
export function notTaken(run: Run, executionId: string, eventId: string): void {
  const full = noRoomFor(run, 1) ?? { reason: 'TOKEN_LIMIT' as const, message: 'no room for its token' };
  noteIncident(run, full.reason, executionId, eventId, `${eventId} was not taken: ${full.message}`);
}

/** Whether `token` runs inside the scope of `scopeId` (as a child, or deeper). */
function isInside(run: Run, token: ExecutionState, scopeId: string): boolean {
  for (let parent = token.parentId, depth = 0; parent !== undefined && depth < 100; depth++) {
    if (parent === scopeId) return true;
    parent = tokenOf(run, parent)?.parentId;
  }
  return false;
}

/** Ends every live token inside the scope of `scopeId` (CANCELLED: their points, timers, jobs and user tasks go). */
export function cancelInside(run: Run, scopeId: string, reason: string): void {
  for (const token of liveTokens(run)) {
    if (isInside(run, token, scopeId)) end(run, release(run, token, { reason }), 'CANCELLED');
  }
}

/**
 * After a token inside a subprocess ended: when no live token is left in
 * the scope, the scope token leaves the subprocess by its outgoing flow
 * (its boundary timers go). Nothing for a token at the process level.
 */
export function leaveScopeIfDone(run: Run, parentId: string | undefined, queue: Move[]): void {
  if (parentId === undefined) return;
  const scope = tokenOf(run, parentId);
  if (scope?.status !== 'WAITING_SCOPE' || !run.instance.activeExecutionIds.includes(scope.id)) return;
  const inside = liveTokens(run).filter((t) => t.parentId === scope.id);
  if (inside.some((t) => t.trigger !== true)) return;
  // Only standby triggers of its event subprocesses are left: they go with it.
  for (const t of inside) end(run, release(run, t, { reason: `subprocess ${scope.activityId} ended` }), 'CANCELLED');
  const flowId = node(run.model, scope.activityId).outgoing[0];
  const left = release(run, scope);
  if (flowId !== undefined)
    return void queue.push({ execution: left, nodeId: targetOf(run.model, flowId), via: flowId });
  // A subprocess without an outgoing flow ends there (an implicit end), and may leave its own scope.
  end(run, left, 'ENDED');
  leaveScopeIfDone(run, left.parentId, queue);
}

/** The error boundary event on `activityId` that catches `code`: one with this very code first, else one that catches all. */
function catcherOn(run: Run, activityId: string, code: string): BoundaryErrorNode | null {
  const current = node(run.model, activityId);
  const ids = 'boundaryEventIds' in current ? current.boundaryEventIds : [];
  const errors = ids.map((id) => node(run.model, id)).filter((n): n is BoundaryErrorNode => n.kind === 'boundaryError');
  return errors.find((e) => e.errorCode === code) ?? errors.find((e) => e.errorCode === null) ?? null;
}

/**
 * Which event subprocesses of a scope may catch a throw that comes out of
 * `left`, the event subprocess run the walk just left (null: none): never
 * that event subprocess itself, and none of the scope once an interrupting
 * one runs in it (a scope runs at most one interrupting event subprocess,
 * as BPMN says and Camunda 8 does). So a handler's own throw never starts
 * it again.
 */
export function mayCatch(left: EventSubProcessNode | null): (handler: EventSubProcessNode) => boolean {
  return (handler) => left === null || (handler.id !== left.id && !left.interrupting);
}

/** The event subprocess a scope token runs (its run's token), or null for any other scope. */
export function eventSubprocessOf(run: Run, scope: ExecutionState): EventSubProcessNode | null {
  const found = run.model.nodes[scope.activityId];
  return found?.kind === 'eventSubProcess' ? found : null;
}

/**
 * A BPMN error `code` thrown by `thrower`: at its activity (`atActivity`:
 * a task's handler threw it; false: an error end event), else at each
 * enclosing subprocess outwards, the first matching error boundary event
 * catches it, or an error event subprocess drawn in that scope
 * ({@link mayCatch}: never the one the error comes out of). The catching
 * token (the thrower, or the subprocess's token after everything inside it
 * is cancelled) is released and queued at the boundary event. Returns false
 * when nothing catches it: the caller raises UNCAUGHT_ERROR.
 */
export function throwError(
  run: Run,
  thrower: ExecutionState,
  code: string,
  atActivity: boolean,
  queue: Move[],
): boolean {
  const reason = `BPMN error ${code} thrown at ${thrower.activityId}`;
  if (atActivity) {
    const catcher = catcherOn(run, thrower.activityId, code);
    if (catcher !== null) {
      queue.push({ execution: release(run, thrower, { reason }), nodeId: catcher.id, via: null });
      return true;
    }
  }
  let left: EventSubProcessNode | null = null;
  for (let scopeId = thrower.parentId, depth = 0; scopeId !== undefined && depth < 100; depth++) {
    const scope = tokenOf(run, scopeId);
    if (scope === undefined) return false;
    // Inside the scope first: an error event subprocess drawn in it.
    const handler = errorSubprocessIn(run, scope.activityId, code, mayCatch(left));
    if (handler !== null) {
      cancelInside(run, scope.id, reason);
      return runErrorSubprocess(run, handler, scope, thrower, queue);
    }
    const catcher = catcherOn(run, scope.activityId, code);
    if (catcher !== null) {
      cancelInside(run, scope.id, reason);
      queue.push({ execution: release(run, scope, { reason }), nodeId: catcher.id, via: null });
      return true;
    }
    left = eventSubprocessOf(run, scope);
    scopeId = scope.parentId;
  }
  // The process level: an error event subprocess drawn in the process ends every token, then runs.
  const handler = errorSubprocessIn(run, undefined, code, mayCatch(left));
  if (handler === null) return false;
  for (const token of liveTokens(run)) end(run, release(run, token, { reason }), 'CANCELLED');
  return runErrorSubprocess(run, handler, null, thrower, queue);
}

/** The error event subprocess drawn in scope `scopeId` (undefined: the process) that catches `code`: the exact code first, else a catch-all. */
function errorSubprocessIn(
  run: Run,
  scopeId: string | undefined,
  code: string,
  allowed: (handler: EventSubProcessNode) => boolean,
): EventSubProcessNode | null {
  const handlers = Object.values(run.model.nodes).filter(
    (n): n is EventSubProcessNode =>
      n.kind === 'eventSubProcess' && n.scope === scopeId && n.trigger.kind === 'error' && allowed(n),
  );
  const codeOf = (n: EventSubProcessNode): string | null => (n.trigger.kind === 'error' ? n.trigger.errorCode : null);
  return handlers.find((n) => codeOf(n) === code) ?? handlers.find((n) => codeOf(n) === null) ?? null;
}

/**
 * A new token runs the error event subprocess inside `scope` (null: at the
 * process level). Its id derives from the token that threw and its step,
 * so every throw runs a handler of its own (with jobs and user tasks of its
 * own) and a re-run of the same step makes the same one. False when there
 * was no room for it: the error is then uncaught.
 */
function runErrorSubprocess(
  run: Run,
  esp: EventSubProcessNode,
  scope: ExecutionState | null,
  thrower: ExecutionState,
  queue: Move[],
): boolean {
  const id = executionId(run.instance.id, `error:${thrower.id}:${thrower.step}:${esp.id}`);
  const token = newToken(run, id, esp.id, scope?.id, { step: 1 });
  if (token === null) {
    notTaken(run, thrower.id, esp.id);
    return true;
  }
  enterScope(run, token, esp, queue);
  return true;
}
