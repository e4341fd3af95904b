/**
 * Embedded subprocesses and BPMN errors in the pure core: entering a
 * subprocess (a scope token waits while its children run), leaving it when
 * the last child ends, ending everything inside it, and finding the error
 * boundary event that catches a thrown code. Pure, like the rest of the
 * core (transitions.ts).
 */
import type { BoundaryErrorNode, SubProcessNode } from '../bpmn/model';
import { executionId } from './ids';
import { end, liveTokens, node, raise, release, type Run, targetOf, tokenOf, update } from './run';
import type { ExecutionState } from './state';
import { boundaryTimers, withTimers } from './waits';

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
export function enterScope(run: Run, execution: ExecutionState, sub: SubProcessNode, queue: Move[]): void {
  const timers = boundaryTimers(run, execution, sub);
  if (typeof timers === 'string') return raise(run, execution, 'INVALID_TIMER', timers);
  run.timers.push(...timers);
  const scope = update(run, execution, { status: 'WAITING_SCOPE', ...withTimers(timers) });
  const child: ExecutionState = {
    id: executionId(run.instance.id, `scope:${scope.id}:${scope.step}`),
    processInstanceId: run.instance.id,
    parentId: scope.id,
    activityId: sub.startEventId,
    status: 'ACTIVE',
    step: 0,
    jobId: null,
    waitingFor: null,
    createdAt: run.now,
    updatedAt: run.now,
  };
  run.created += 1;
  run.instance = { ...run.instance, activeExecutionIds: [...run.instance.activeExecutionIds, child.id] };
  queue.push({ execution: update(run, child, {}), nodeId: sub.startEventId, via: null });
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
  if (liveTokens(run).some((t) => t.parentId === scope.id)) return;
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
 * A BPMN error `code` thrown by `thrower`: at its activity (`atActivity`:
 * a task's handler threw it; false: an error end event), else at each
 * enclosing subprocess outwards, the first matching error boundary event
 * catches it. The catching token (the thrower, or the subprocess's token
 * after everything inside it is cancelled) is released and queued at the
 * boundary event. Returns false when nothing catches it: the caller raises
 * UNCAUGHT_ERROR.
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
  for (let scopeId = thrower.parentId, depth = 0; scopeId !== undefined && depth < 100; depth++) {
    const scope = tokenOf(run, scopeId);
    if (scope === undefined) return false;
    const catcher = catcherOn(run, scope.activityId, code);
    if (catcher !== null) {
      cancelInside(run, scope.id, reason);
      queue.push({ execution: release(run, scope, { reason }), nodeId: catcher.id, via: null });
      return true;
    }
    scopeId = scope.parentId;
  }
  return false;
}
