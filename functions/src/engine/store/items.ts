/**
 * A multi-instance activity's items, counted outside the caller's
 * document: item i counts in `itemBatches/{batch}-{i mod shards}`
 * (docs/data-model.md). Firestore takes about one sustained write per second
 * per document, so 500 items ending within seconds would queue on one
 * document; spread over up to 25 counting documents, each takes about 20.
 * The caller's document is written when the activity starts and when it
 * ends, and is only read in between (to start the next item of a window).
 *
 * When an item ends (its last token), in the same transaction: its output
 * is counted in its shard; the completion condition, if any, is checked
 * (such an activity counts in one document, so the counts are whole); the
 * next item of its shard starts; and when its shard is full, the other
 * shards are read: all full, the caller's token moves on.
 */
import type { DocumentReference } from '@google-cloud/firestore';
import { computeStep, StepFailedError } from '../../core/errors';
import type { Engine } from '../engine';
import { completeItems, completionHolds, stopItems } from '../item-transitions';
import { firstStarted, itemStart, shardSize } from '../items';
import { ITEM_OUTPUT } from '../../bpmn/item-body';
import type { ExecutionState, InstanceState, ItemsState, Transition } from '../state';
import type { Step } from './step';
import { startIfAwaited } from './start-call';
import { COLLECTIONS } from './collections';
import { readInstanceDoc } from './instance-doc';
import type { UnitOfWork } from './unit-of-work';
import { modelOf } from './versions';

export const itemShardRef = (uow: UnitOfWork, batch: string, shard: number): DocumentReference =>
  uow.db.collection(COLLECTIONS.itemBatches).doc(`${batch}-${shard}`);

/** One counting document: the outputs of the items of its shard that ended (by index), and the next index it starts. */
interface Shard {
  readonly done: Readonly<Record<string, unknown>>;
  readonly nextIndex: number;
}

/** A shard as stored, or as it stands before its first item ended (nothing done, its window started). */
async function readShard(uow: UnitOfWork, items: ItemsState, shard: number): Promise<Shard> {
  const data = await uow.get(itemShardRef(uow, items.batch, shard));
  if (data !== undefined)
    return { done: (data.done ?? {}) as Record<string, unknown>, nextIndex: Number(data.nextIndex) };
  return { done: {}, nextIndex: shard + firstStarted(items, shard) * items.shards };
}

type Waiting = ExecutionState & { readonly items: ItemsState };

/**
 * An item ended (its last token): a step of the unit of work that counts it
 * in its shard, checks the completion condition (such an activity counts in
 * one document, so the counts are whole), and gives the steps that follow:
 * the caller's move when the items are done, else the next item of its
 * shard. Nothing when the activity was left meanwhile (a boundary event, a
 * repair, its completion condition), or when it stopped on a failed
 * completion condition: the item's output is still counted then.
 */
export async function itemEnded(
  uow: UnitOfWork,
  engine: Engine,
  item: InstanceState,
  now: Date,
): Promise<readonly Step[] | null> {
  const ref = item.calledBy?.item;
  if (item.calledBy === undefined || ref === undefined) return null;
  const caller = await readInstanceDoc(uow, item.calledBy.instanceId);
  const token = caller?.tokens[item.calledBy.executionId];
  // The activity was left (a boundary event, a repair, its completion condition): the items are its no more.
  if (caller === null || token?.status !== 'WAITING_ITEMS' || token.items?.batch !== ref.batch) return null;
  const waiting = token as Waiting;
  const { items } = waiting;
  const model = await modelOf(uow, engine, caller.instance);
  const loop = model.nodes[waiting.activityId]?.loop;
  if (loop === undefined)
    throw new StepFailedError(`${waiting.activityId} of ${model.key} is no multi-instance activity`);
  const shard = ref.index % items.shards;
  const stored = await readShard(uow, items, shard);
  if (Object.hasOwn(stored.done, String(ref.index))) return null;
  const outputVariable = loop.outputElementExpression === undefined ? loop.outputElement : ITEM_OUTPUT;
  const output = outputVariable === null ? null : (item.variables[outputVariable] ?? null);
  const done = { ...stored.done, [String(ref.index)]: output };
  const save = (nextIndex: number): void =>
    uow.set(itemShardRef(uow, items.batch, shard), { batch: items.batch, shard, done, nextIndex, updatedAt: now });
  // Stopped on a failed completion condition: the item counts, nothing starts, the incident stands.
  if (items.conditionFailed !== undefined) return (save(stored.nextIndex), null);
  const completed = Object.keys(done).length;
  const counts = { total: items.total, completed, active: Math.min(stored.nextIndex, items.total) - completed };
  const holds = computeStep(`the completion condition of ${waiting.activityId}`, () =>
    completionHolds(loop, item.variables, counts),
  );
  if (typeof holds === 'string') {
    save(stored.nextIndex);
    return [
      async () => {
        const current = await waitingFor(uow, caller.instance.id, waiting);
        if (current === null || current.execution.items.conditionFailed !== undefined) return null;
        return computeStep(`stopping ${waiting.activityId}`, () => stopItems(model, engine.sync, current, holds, now));
      },
    ];
  }
  if (holds) {
    save(stored.nextIndex);
    return [() => leaveWhenDone(uow, engine, caller.instance.id, waiting, now)];
  }
  let nextIndex = stored.nextIndex;
  const steps: Step[] = [];
  if (nextIndex < items.total) {
    const index = nextIndex;
    steps.push(async () => {
      const current = await waitingFor(uow, caller.instance.id, waiting);
      if (current === null) return null;
      return startIfAwaited(uow, engine, itemStart(model, current.instance, current.execution, loop, index), now);
    });
    nextIndex += items.shards;
  }
  save(nextIndex);
  if (completed < shardSize(items, shard)) return steps;
  for (let other = 0; other < items.shards; other++) {
    if (other === shard) continue;
    const s = await readShard(uow, items, other);
    if (Object.keys(s.done).length < shardSize(items, other)) return steps;
  }
  // Every item ended: the caller moves on (its transition deletes the batch's documents).
  return [...steps, () => leaveWhenDone(uow, engine, caller.instance.id, waiting, now)];
}

/** The caller's instance and token, if the token still waits for the same items; null once it left them. */
async function waitingFor(
  uow: UnitOfWork,
  callerId: string,
  waiting: Waiting,
): Promise<{ instance: InstanceState; execution: Waiting; tokens: Readonly<Record<string, ExecutionState>> } | null> {
  const caller = await readInstanceDoc(uow, callerId);
  const token = caller?.tokens[waiting.id];
  if (caller === null || token?.status !== 'WAITING_ITEMS' || token.items?.batch !== waiting.items.batch) return null;
  return { instance: caller.instance, execution: token as Waiting, tokens: caller.tokens };
}

/**
 * The items are done (every one ended, or the completion condition held):
 * the caller's token leaves with the outputs of the items that ended (read
 * now, from every shard), terminating those still running; nothing if it
 * left already (another item's end got there first).
 */
async function leaveWhenDone(
  uow: UnitOfWork,
  engine: Engine,
  callerId: string,
  waiting: Waiting,
  now: Date,
): Promise<Transition | null> {
  const current = await waitingFor(uow, callerId, waiting);
  if (current === null) return null;
  const { items } = current.execution;
  const shards: Readonly<Record<string, unknown>>[] = [];
  // Started (below its shard's next index) and not ended: still running, terminated as the caller leaves.
  const running: number[] = [];
  for (let shard = 0; shard < items.shards; shard++) {
    const s = await readShard(uow, items, shard);
    shards.push(s.done);
    for (let index = shard; index < Math.min(s.nextIndex, items.total); index += items.shards)
      if (!Object.hasOwn(s.done, String(index))) running.push(index);
  }
  const model = await modelOf(uow, engine, current.instance);
  return computeStep(`leaving ${waiting.activityId} after its items`, () =>
    completeItems(model, engine.sync, current, outputsOf(items, shards), running, now),
  );
}

/** The outputs in item order (null for an item that has none). */
function outputsOf(items: ItemsState, shards: readonly Readonly<Record<string, unknown>>[]): unknown[] {
  const outputs: unknown[] = new Array<unknown>(items.total).fill(null);
  for (const done of shards) for (const [index, value] of Object.entries(done)) outputs[Number(index)] = value;
  return outputs;
}
