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
import type { Engine } from '../engine';
import { completeItems, completionHolds, stopItems } from '../item-transitions';
import { firstStarted, itemStart, shardSize } from '../items';
import { ITEM_OUTPUT } from '../../bpmn/item-body';
import type { ExecutionState, InstanceState, ItemsState, Transition } from '../state';
import { startCall } from './start-call';
import { COLLECTIONS } from './collections';
import { readInstanceDoc } from './instance-doc';
import type { UnitOfWork } from './unit-of-work';

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

/** The transitions an item's end brings: the next item's start, and the caller's move when the items are done. */
export async function itemEnded(
  uow: UnitOfWork,
  engine: Engine,
  item: InstanceState,
  now: Date,
): Promise<Transition[]> {
  const ref = item.calledBy?.item;
  if (item.calledBy === undefined || ref === undefined) return [];
  const caller = await readInstanceDoc(uow, item.calledBy.instanceId);
  const token = caller?.tokens[item.calledBy.executionId];
  // The activity was left (a boundary event, a repair): the items are its no more.
  if (caller === null || token?.status !== 'WAITING_ITEMS' || token.items?.batch !== ref.batch) return [];
  const waiting = token as Waiting;
  const { items } = waiting;
  const model = engine.model(caller.instance.processKey);
  const loop = model.nodes[waiting.activityId]?.loop;
  if (loop === undefined) throw new Error(`${waiting.activityId} of ${model.key} is no multi-instance activity`);
  const shard = ref.index % items.shards;
  const stored = await readShard(uow, items, shard);
  if (Object.hasOwn(stored.done, String(ref.index))) return [];
  const outputVariable = loop.outputElementExpression === undefined ? loop.outputElement : ITEM_OUTPUT;
  const output = outputVariable === null ? null : (item.variables[outputVariable] ?? null);
  const done = { ...stored.done, [String(ref.index)]: output };
  const completed = Object.keys(done).length;
  const next: Transition[] = [];
  const state = { ...caller, execution: waiting };
  const counts = { total: items.total, completed, active: Math.min(stored.nextIndex, items.total) - completed };
  const holds = completionHolds(loop, item.variables, counts);
  if (typeof holds === 'string') {
    // A FEEL completion condition that fails stops the caller's token with an incident; the items go on.
    next.push(stopItems(model, engine.sync, state, holds, now));
    uow.set(itemShardRef(uow, items.batch, shard), {
      batch: items.batch,
      shard,
      done,
      nextIndex: stored.nextIndex,
      updatedAt: now,
    });
    return next;
  }
  if (holds) {
    // One shard (items.ts): every item that started and did not end is still running.
    const running: number[] = [];
    for (let i = 0; i < Math.min(stored.nextIndex, items.total); i++)
      if (!Object.hasOwn(done, String(i))) running.push(i);
    next.push(completeItems(model, engine.sync, state, outputsOf(items, [done]), running, now));
    return next;
  }
  let nextIndex = stored.nextIndex;
  if (nextIndex < items.total) {
    next.push(startItem(engine, caller.instance, waiting, model.key, nextIndex, now));
    nextIndex += items.shards;
  }
  if (completed < shardSize(items, shard)) {
    uow.set(itemShardRef(uow, items.batch, shard), { batch: items.batch, shard, done, nextIndex, updatedAt: now });
    return next;
  }
  const all: Record<string, unknown>[] = [done];
  for (let other = 0; other < items.shards; other++) {
    if (other === shard) continue;
    const s = await readShard(uow, items, other);
    if (Object.keys(s.done).length < shardSize(items, other)) {
      uow.set(itemShardRef(uow, items.batch, shard), { batch: items.batch, shard, done, nextIndex, updatedAt: now });
      return next;
    }
    all.push({ ...s.done });
  }
  // Every item ended: the caller moves on (its transition deletes the batch's documents).
  next.push(completeItems(model, engine.sync, state, outputsOf(items, all), [], now));
  return next;
}

/** The outputs in item order (null for an item that has none). */
function outputsOf(items: ItemsState, shards: readonly Readonly<Record<string, unknown>>[]): unknown[] {
  const outputs: unknown[] = new Array<unknown>(items.total).fill(null);
  for (const done of shards) for (const [index, value] of Object.entries(done)) outputs[Number(index)] = value;
  return outputs;
}

function startItem(
  engine: Engine,
  caller: InstanceState,
  token: Waiting,
  processKey: string,
  index: number,
  now: Date,
): Transition {
  const model = engine.model(processKey);
  const loop = model.nodes[token.activityId]?.loop;
  if (loop === undefined) throw new Error(`${token.activityId} is no multi-instance activity`);
  return startCall(engine, itemStart(model, caller, token, loop, index), now);
}
