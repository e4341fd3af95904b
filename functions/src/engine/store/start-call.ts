import { computeStep } from '../../core/errors';
import type { Engine } from '../engine';
import { executionId } from '../ids';
import type { CallStart, Transition } from '../state';
import { startInstance } from '../transitions';
import { readInstanceDoc } from './instance-doc';
import type { UnitOfWork } from './unit-of-work';

/** The start of an instance a call activity, or a multi-instance activity's item, asks for: its token at the called model's start. */
export function startCall(engine: Engine, call: CallStart, now: Date): Transition {
  // An item runs its caller's version (which the caller's step has loaded); a called process, the one deployed now.
  const model =
    call.processVersion === undefined
      ? engine.model(call.processKey)
      : (engine.at(call.processKey, call.processVersion) ?? engine.model(call.processKey));
  return startInstance(model, engine.sync, {
    instanceId: call.instanceId,
    executionId: executionId(call.instanceId, 'start'),
    businessKey: call.businessKey,
    variables: call.variables,
    now,
    calledBy: call.calledBy,
  });
}

/**
 * Starts a called instance (or an item), unless it exists (a re-run of a
 * step whose commit landed finds it started) or its caller no longer waits
 * for it (the caller left the activity earlier in this unit: an item whose
 * activity's completion condition already held is never started).
 */
export async function startIfAwaited(
  uow: UnitOfWork,
  engine: Engine,
  call: CallStart,
  now: Date,
): Promise<Transition | null> {
  if ((await readInstanceDoc(uow, call.instanceId)) !== null) return null;
  const caller = await readInstanceDoc(uow, call.calledBy.instanceId);
  const token = caller?.tokens[call.calledBy.executionId];
  const item = call.calledBy.item;
  const awaited =
    item === undefined
      ? token?.status === 'WAITING_CALL' && token.calledInstanceId === call.instanceId
      : token?.status === 'WAITING_ITEMS' && token.items?.batch === item.batch;
  if (!awaited) return null;
  return computeStep(`starting ${call.processKey} for ${call.calledBy.activityId}`, () => startCall(engine, call, now));
}
