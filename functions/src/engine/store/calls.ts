/**
 * What a transition changes beyond its own instance, through call
 * activities and multi-instance activities (whose items run as called
 * instances): the instances it starts, the called instances it terminates,
 * and, when it ends a called instance, its caller's token moving on (an
 * item: counted, store/items.ts). Each
 * is one more transition in the same unit of work (applyAndSettle applies
 * them in turn), read by id, so a call and its child change together or
 * not at all.
 */
import type { Engine } from '../engine';
import { completeCall, terminateInstance, waitsForCall } from '../call-transitions';
import type { Transition } from '../state';
import { startCall } from './start-call';
import { readInstanceDoc } from './instance-doc';
import type { UnitOfWork } from './unit-of-work';
import { itemEnded, itemShardRef } from './items';

export async function callTransitions(
  uow: UnitOfWork,
  engine: Engine,
  t: Transition,
  now: Date,
): Promise<Transition[]> {
  const next: Transition[] = [];
  for (const call of t.calls) {
    // A re-run of a step whose commit landed finds its child started.
    if ((await readInstanceDoc(uow, call.instanceId)) !== null) continue;
    next.push(startCall(engine, call, now));
  }
  for (const cancel of t.cancelCalls) {
    const child = await readInstanceDoc(uow, cancel.instanceId);
    if (child === null || child.instance.activeExecutionIds.length === 0) continue;
    next.push(terminateInstance(child, cancel.reason, now));
  }
  for (const ended of t.endBatches)
    for (let shard = 0; shard < ended.shards; shard++) uow.delete(itemShardRef(uow, ended.batch, shard));
  const { instance } = t;
  if (instance.calledBy === undefined || instance.terminated !== undefined || instance.activeExecutionIds.length > 0)
    return next;
  if (instance.calledBy.item !== undefined) return [...next, ...(await itemEnded(uow, engine, instance, now))];
  const caller = await readInstanceDoc(uow, instance.calledBy.instanceId);
  const execution = caller?.tokens[instance.calledBy.executionId];
  if (caller === null || execution === undefined || !waitsForCall(execution, instance.id)) return next;
  next.push(
    completeCall(engine.model(caller.instance.processKey), engine.sync, { ...caller, execution }, instance, now),
  );
  return next;
}
