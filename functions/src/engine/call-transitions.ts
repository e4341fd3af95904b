/**
 * Call activities in the pure core: a called instance's end moves its
 * caller's token on, and a caller that leaves its call activity terminates
 * the called instance. The store (store/calls.ts) applies both in the
 * transaction of the change that causes them. Pure, like transitions.ts.
 */
import type { ProcessModel } from '../bpmn/model';
import { leaveFrom } from './enter';
import { end, finish, liveTokens, newRun, NO_MODEL, raise, release, type SyncHandler } from './run';
import { resultInto } from './expressions';
import type { ExecutionState, InstanceState, Transition } from './state';

/** An instance and its tokens as stored (see transitions.ts, TokenState). */
interface Stored {
  readonly instance: InstanceState;
  readonly tokens: Readonly<Record<string, ExecutionState>>;
}

/** Whether `execution` waits at a call activity for `childId`. */
export const waitsForCall = (execution: ExecutionState | undefined, childId: string): boolean =>
  execution?.status === 'WAITING_CALL' && execution.calledInstanceId === childId;

/**
 * The called instance `child` has no token left: its variables are merged
 * into the caller's (all of them, Camunda 8's default) and the caller's
 * token leaves the call activity (its boundary timers and points go). The
 * caller checks the token waits for this child (this throws otherwise).
 */
export function completeCall(
  model: ProcessModel,
  sync: Readonly<Record<string, SyncHandler>>,
  caller: Stored & { readonly execution: ExecutionState },
  child: InstanceState,
  now: Date,
): Transition {
  const { execution } = caller;
  if (!waitsForCall(execution, child.id))
    throw new Error(`token ${execution.id} does not wait for called instance ${child.id}`);
  const call = model.nodes[execution.activityId];
  // Outputs, when the call has any; else all the child's variables, unless propagateAllChildVariables="false".
  const back =
    call?.kind === 'callActivity' && call.propagateChildVariables === false && (call.io?.outputs.length ?? 0) === 0
      ? {}
      : child.variables;
  const merged = resultInto(call?.io, caller.instance.variables, back, execution.activityId);
  const variables = 'values' in merged ? merged.values : caller.instance.variables;
  const run = newRun(model, sync, { ...caller.instance, variables, updatedAt: now }, now, caller.tokens);
  const released = release(run, execution, { calledInstanceId: child.id });
  if ('values' in merged) leaveFrom(run, released, execution.activityId);
  else raise(run, released, merged.reason, merged.message);
  return finish(run);
}

/**
 * A called instance whose caller left it: every token not yet ended is
 * CANCELLED with `reason` (its points, timers, jobs, user tasks go, and
 * the instances its own call activities started are terminated in turn),
 * and it is COMPLETED with `terminated` set, whatever incident it had open.
 */
export function terminateInstance(stored: Stored, reason: string, now: Date): Transition {
  const run = newRun(NO_MODEL, {}, { ...stored.instance, updatedAt: now }, now, stored.tokens);
  for (const token of liveTokens(run)) end(run, release(run, token, { reason }), 'CANCELLED');
  run.instance = {
    ...run.instance,
    activeExecutionIds: [],
    status: 'COMPLETED',
    completedAt: now,
    terminated: { at: now, reason },
  };
  return finish(run);
}
