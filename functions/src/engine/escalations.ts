/**
 * Escalations in the pure core: a code thrown to the enclosing scopes,
 * outwards, caught by the first escalation event subprocess drawn in a
 * scope or escalation boundary event on a subprocess that matches it (the
 * exact code before a catch-all). Interrupting: everything in that scope
 * ends first; non-interrupting: a new token runs the catcher beside it.
 * Uncaught, nothing happens: an escalation is a notice, not an error
 * (Camunda 8 and Flowable agree). Pure, like the rest of the core.
 */
import type { BoundaryEscalationNode, EventSubProcessNode } from '../bpmn/model';
import { executionId } from './ids';
import { end, liveTokens, newToken, node, release, type Run, tokenOf } from './run';
import { cancelInside, enterScope, eventSubprocessOf, mayCatch, type Move, notTaken } from './scopes';
import type { ExecutionState } from './state';

const codeOf = (n: EventSubProcessNode): string | null =>
  n.trigger.kind === 'escalation' ? n.trigger.escalationCode : null;

/** The escalation event subprocess drawn in `scopeId` (undefined: the process) that catches `code`, among those `allowed`. */
function handlerIn(
  run: Run,
  scopeId: string | undefined,
  code: string,
  allowed: (handler: EventSubProcessNode) => boolean,
): EventSubProcessNode | null {
  const handlers = Object.values(run.model.nodes).filter(
    (n): n is EventSubProcessNode =>
      n.kind === 'eventSubProcess' && n.scope === scopeId && n.trigger.kind === 'escalation' && allowed(n),
  );
  return handlers.find((n) => codeOf(n) === code) ?? handlers.find((n) => codeOf(n) === null) ?? null;
}

/** The escalation boundary event on `activityId` that catches `code`. */
function boundaryOn(run: Run, activityId: string, code: string): BoundaryEscalationNode | null {
  const current = node(run.model, activityId);
  const ids = 'boundaryEventIds' in current ? current.boundaryEventIds : [];
  const found = ids.map((id) => node(run.model, id)).filter((n) => n.kind === 'boundaryEscalation');
  return found.find((e) => e.escalationCode === code) ?? found.find((e) => e.escalationCode === null) ?? null;
}

/** Runs an escalation event subprocess in `scope` (null: the process): interrupting, after ending the rest of the scope. */
function runHandler(
  run: Run,
  esp: EventSubProcessNode,
  scope: ExecutionState | null,
  seed: string,
  queue: Move[],
): void {
  const reason = `escalation caught by event subprocess ${esp.id}`;
  if (esp.interrupting) {
    if (scope !== null) cancelInside(run, scope.id, reason);
    else for (const token of liveTokens(run)) end(run, release(run, token, { reason }), 'CANCELLED');
  }
  const id = executionId(run.instance.id, `escalation:${scope?.id ?? 'process'}:${esp.id}:${seed}`);
  const token = newToken(run, id, esp.id, scope?.id, { step: 1 });
  if (token === null) return notTaken(run, scope?.id ?? id, esp.id);
  enterScope(run, token, esp, queue);
}

/**
 * Escalation `code` thrown by `thrower` (at its step: the seed of the
 * tokens it makes, so a re-run makes the same ones). Returns whether it was
 * caught; the caller goes on with the thrower if it is still live. An
 * event subprocess never catches what comes out of its own run
 * (scopes.ts, mayCatch).
 */
export function escalate(run: Run, thrower: ExecutionState, code: string, queue: Move[]): boolean {
  const seed = `${thrower.id}:${thrower.step}`;
  let left: EventSubProcessNode | null = null;
  for (let scopeId = thrower.parentId, depth = 0; scopeId !== undefined && depth < 100; depth++) {
    const scope = tokenOf(run, scopeId);
    if (scope === undefined) return false;
    const handler = handlerIn(run, scope.activityId, code, mayCatch(left));
    if (handler !== null) return (runHandler(run, handler, scope, seed, queue), true);
    const boundary = boundaryOn(run, scope.activityId, code);
    if (boundary !== null) {
      if (boundary.cancelActivity) {
        const reason = `escalation ${code} caught by boundary event ${boundary.id}`;
        cancelInside(run, scope.id, reason);
        queue.push({ execution: release(run, scope, { reason }), nodeId: boundary.id, via: null });
      } else {
        const id = executionId(run.instance.id, `escalation:${boundary.id}:${seed}`);
        const token = newToken(run, id, boundary.id, scope.parentId);
        if (token === null) notTaken(run, scope.id, boundary.id);
        else queue.push({ execution: token, nodeId: boundary.id, via: null });
      }
      return true;
    }
    left = eventSubprocessOf(run, scope);
    scopeId = scope.parentId;
  }
  const handler = handlerIn(run, undefined, code, mayCatch(left));
  if (handler === null) return false;
  runHandler(run, handler, null, seed, queue);
  return true;
}
