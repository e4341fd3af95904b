/**
 * What a transition changes beyond its own instance, through call
 * activities and multi-instance activities (whose items run as called
 * instances): the instances it starts, the called instances it terminates,
 * and, when it ends a called instance, its caller's token moving on (an
 * item: counted, store/items.ts). Each is a step of the same unit of work
 * (apply.ts, applyAndSettle), computed when its turn comes from what it
 * reads then, by id, so a call and its child change together or not at all.
 */
import { computeStep } from '../../core/errors';
import type { Engine } from '../engine';
import { completeCall, terminateInstance, waitsForCall } from '../call-transitions';
import type { Transition } from '../state';
import type { Step } from './step';
import { startIfAwaited } from './start-call';
import { readInstanceDoc } from './instance-doc';
import type { UnitOfWork } from './unit-of-work';
import { itemEnded, itemShardRef } from './items';
import { modelOf } from './versions';

export function callSteps(uow: UnitOfWork, engine: Engine, t: Transition, now: Date): Step[] {
  // The instances this transition starts (a call's child, a parallel activity's first items) all start first.
  const starts = t.calls.map((call) => () => startIfAwaited(uow, engine, call, now));
  const steps: Step[] = starts.length <= 1 ? starts : [() => Promise.resolve({ siblings: starts })];
  for (const cancel of t.cancelCalls)
    steps.push(async () => {
      const child = await readInstanceDoc(uow, cancel.instanceId);
      if (child === null || child.instance.activeExecutionIds.length === 0) return null;
      return computeStep(`terminating called instance ${cancel.instanceId}`, () =>
        terminateInstance(child, cancel.reason, now),
      );
    });
  for (const ended of t.endBatches)
    for (let shard = 0; shard < ended.shards; shard++) uow.delete(itemShardRef(uow, ended.batch, shard));
  const { instance } = t;
  if (instance.calledBy === undefined || instance.terminated !== undefined || instance.activeExecutionIds.length > 0)
    return steps;
  const calledBy = instance.calledBy;
  if (calledBy.item !== undefined) return [...steps, () => itemEnded(uow, engine, instance, now)];
  steps.push(async () => {
    const caller = await readInstanceDoc(uow, calledBy.instanceId);
    const execution = caller?.tokens[calledBy.executionId];
    if (caller === null || execution === undefined || !waitsForCall(execution, instance.id)) return null;
    const model = await modelOf(uow, engine, caller.instance);
    return computeStep(
      `moving ${calledBy.activityId} of ${caller.instance.id} on after its called instance ended`,
      () => completeCall(model, engine.sync, { ...caller, execution }, instance, now),
    );
  });
  return steps;
}
