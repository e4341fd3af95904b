/**
 * A multi-instance activity's end in the pure core: the completion
 * condition after an item, and the token leaving once the items are done.
 * The store (store/items.ts) decides when; items.ts starts them.
 */
import { conditionResult } from '../bpmn/condition';
import type { MultiInstance, ProcessModel } from '../bpmn/model';
import { leaveFrom } from './enter';
import { itemInstanceId } from './ids';
import { addIncident, finish, newRun, release, type SyncHandler, update } from './run';
import type { ExecutionState, InstanceState, Transition } from './state';

/** The caller's instance, the token waiting for the items, and its tokens. */
interface Caller {
  readonly instance: InstanceState;
  readonly execution: ExecutionState;
  readonly tokens: Readonly<Record<string, ExecutionState>>;
}

/** What the completion condition sees after an item ended: the item's variables and the counts. */
export function completionHolds(
  loop: MultiInstance,
  itemVariables: Readonly<Record<string, unknown>>,
  counts: { readonly total: number; readonly completed: number; readonly active: number },
): boolean | string {
  if (loop.completionCondition === null) return false;
  const result = conditionResult(loop.completionCondition, {
    ...itemVariables,
    numberOfInstances: counts.total,
    numberOfCompletedInstances: counts.completed,
    numberOfActiveInstances: counts.active,
    nrOfInstances: counts.total,
    nrOfCompletedInstances: counts.completed,
    nrOfActiveInstances: counts.active,
  });
  return result.ok ? result.value : `completion condition: ${result.error}`;
}

/**
 * The completion condition failed after an item: the waiting token keeps
 * its items but is marked (`items.conditionFailed`), so the activity starts
 * no further item, cannot finish by itself and holds the instance in
 * INCIDENT until a repair moves or cancels it; an EXPRESSION_FAILED incident
 * names the activity and the failure.
 */
export function stopItems(
  model: ProcessModel,
  sync: Readonly<Record<string, SyncHandler>>,
  caller: Caller,
  error: string,
  now: Date,
): Transition {
  const run = newRun(model, sync, { ...caller.instance, updatedAt: now }, now, caller.tokens);
  const { execution } = caller;
  if (execution.status !== 'WAITING_ITEMS' || execution.items === undefined)
    throw new Error(`token ${execution.id} waits for no items`);
  update(run, execution, { items: { ...execution.items, conditionFailed: error } });
  addIncident(run, 'EXPRESSION_FAILED', execution.id, execution.activityId, `${execution.activityId}: ${error}`);
  return finish(run);
}

/**
 * The items are done (every one ended, or the completion condition held):
 * the output collection (the items' outputs in item order; null for an
 * item that has none yet) is set, the items still running are terminated,
 * and the token leaves the activity (its boundary timers and points go).
 */
export function completeItems(
  model: ProcessModel,
  sync: Readonly<Record<string, SyncHandler>>,
  caller: Caller,
  outputs: readonly unknown[],
  running: readonly number[],
  now: Date,
): Transition {
  const { execution } = caller;
  const items = execution.items;
  const loop = model.nodes[execution.activityId]?.loop;
  if (execution.status !== 'WAITING_ITEMS' || items === undefined || loop === undefined)
    throw new Error(`token ${execution.id} waits for no items`);
  const output = loop.outputCollection === null ? {} : { [loop.outputCollection]: outputs };
  const run = newRun(
    model,
    sync,
    { ...caller.instance, variables: { ...caller.instance.variables, ...output }, updatedAt: now },
    now,
    caller.tokens,
  );
  const reason = `the completion condition of ${execution.activityId} holds`;
  for (const index of running) run.cancelCalls.push({ instanceId: itemInstanceId(items.batch, index), reason });
  leaveFrom(run, release(run, execution, { itemsDone: true }), execution.activityId);
  return finish(run);
}
