/**
 * Multi-instance activities in the pure core. The token waits
 * (WAITING_ITEMS) while each item runs as an instance of its own of the
 * activity alone (bpmn/item-body.ts), started like a call activity's child
 * (store/calls.ts); the store counts the items that ended outside the
 * caller's document (store/items.ts) and, when the last has ended or the
 * completion condition holds, moves the token on (item-transitions.ts).
 */
import { itemBodyKey } from '../bpmn/item-body';
import { evaluateFeel } from '../bpmn/feel';
import { type FlowNode, ITEMS_IN_FLIGHT, MAX_ITEMS, type MultiInstance, type ProcessModel } from '../bpmn/model';
import { itemBatchId, itemInstanceId } from './ids';
import { raise, type Run, update } from './run';
import type { CallStart, ExecutionState, InstanceState, ItemsState } from './state';
import { armBoundaries } from './waits';

/** Items per counting document: each takes about one write per item that ends, well under one per second for most runs. */
const ITEMS_PER_SHARD = 20;
/** At most this many counting documents: the last item of each reads them all. */
const MAX_SHARDS = 25;

/** The items of shard `shard`: indexes shard, shard + shards, … below total. */
export const shardSize = (items: Pick<ItemsState, 'total' | 'shards'>, shard: number): number =>
  shard >= items.total ? 0 : Math.ceil((items.total - shard) / items.shards);

/** The items a shard starts with (its first `window`); the next of it starts as one ends. */
export const firstStarted = (items: Pick<ItemsState, 'total' | 'shards' | 'window'>, shard: number): number =>
  Math.min(items.window, shardSize(items, shard));

/** How many items to run, from the collection or loopCardinality; a text when the value is not one. */
function itemsOf(
  loop: MultiInstance,
  variables: Readonly<Record<string, unknown>>,
): readonly unknown[] | number | string {
  if (loop.collectionExpression !== undefined) {
    const result = evaluateFeel(loop.collectionExpression, variables);
    if (!result.ok) return `inputCollection: ${result.error}`;
    return Array.isArray(result.value)
      ? result.value
      : `inputCollection =${loop.collectionExpression} must give a list, not ${JSON.stringify(result.value)}`;
  }
  if (loop.collection !== null) {
    const value = variables[loop.collection];
    return Array.isArray(value)
      ? value
      : `variable ${loop.collection} must be a list to run the activity once per item, not ${value === undefined ? 'absent' : typeof value}`;
  }
  const { cardinality } = loop;
  const value =
    cardinality === null ? 0 : 'literal' in cardinality ? cardinality.literal : variables[cardinality.variable];
  return typeof value === 'number' && Number.isInteger(value) && value >= 0
    ? value
    : `loopCardinality must be a whole number of at least 0, not ${value === undefined ? 'absent' : JSON.stringify(value)}`;
}

/** The start of item `index`: the caller's variables now, the item in its variable and `loopCounter` (1-based). */
export function itemStart(
  model: ProcessModel,
  caller: InstanceState,
  token: ExecutionState & { readonly items: ItemsState },
  loop: MultiInstance,
  index: number,
): CallStart {
  const element = token.items.elements === null ? {} : { [loop.elementVariable]: token.items.elements[index] ?? null };
  return {
    instanceId: itemInstanceId(token.items.batch, index),
    processKey: itemBodyKey(model.key, token.activityId),
    processVersion: model.version,
    businessKey: caller.businessKey,
    variables: { ...caller.variables, ...element, loopCounter: index + 1 },
    calledBy: {
      instanceId: caller.id,
      executionId: token.id,
      activityId: token.activityId,
      depth: (caller.calledBy?.depth ?? 0) + 1,
      item: { index, batch: token.items.batch },
    },
  };
}

/**
 * A token reaches a multi-instance activity. No item: its output
 * collection is empty and it goes on (the caller continues by `next`).
 * Otherwise its boundary events are armed, the first items started (all of
 * a shard's window), and it waits WAITING_ITEMS.
 */
export function enterItems(
  run: Run,
  execution: ExecutionState,
  activity: FlowNode & { readonly loop: MultiInstance },
  next: (flowId: string | undefined) => unknown,
): void {
  const { loop } = activity;
  const found = itemsOf(loop, run.instance.variables);
  if (typeof found === 'string')
    return raise(run, execution, 'INVALID_ITEMS', `multi-instance ${activity.id}: ${found}`);
  const total = typeof found === 'number' ? found : found.length;
  if (total > MAX_ITEMS)
    return raise(
      run,
      execution,
      'STEP_LIMIT',
      `multi-instance ${activity.id} has ${total} items, more than ${MAX_ITEMS}`,
    );
  if (total === 0) {
    if (loop.outputCollection !== null)
      run.instance = { ...run.instance, variables: { ...run.instance.variables, [loop.outputCollection]: [] } };
    next(activity.outgoing[0]);
    return;
  }
  const armed = 'boundaryEventIds' in activity ? armBoundaries(run, execution, activity) : {};
  if (armed === null) return;
  const one = loop.sequential || loop.completionCondition !== null;
  const shards = one ? 1 : Math.min(MAX_SHARDS, Math.ceil(total / ITEMS_PER_SHARD));
  const items: ItemsState = {
    batch: itemBatchId(execution.id, execution.step),
    total,
    shards,
    window: loop.sequential ? 1 : Math.max(1, Math.floor(ITEMS_IN_FLIGHT / shards)),
    elements: typeof found === 'number' ? null : found,
  };
  const token = update(run, execution, { status: 'WAITING_ITEMS', items, ...armed }) as ExecutionState & {
    items: ItemsState;
  };
  for (let shard = 0; shard < shards; shard++)
    for (let i = 0; i < firstStarted(items, shard); i++)
      run.calls.push(itemStart(run.model, run.instance, token, loop, shard + i * shards));
}
