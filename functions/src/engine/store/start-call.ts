import type { Engine } from '../engine';
import { executionId } from '../ids';
import type { CallStart, Transition } from '../state';
import { startInstance } from '../transitions';

/** The start of an instance a call activity, or a multi-instance activity's item, asks for: its token at the called model's start. */
export function startCall(engine: Engine, call: CallStart, now: Date): Transition {
  return startInstance(engine.model(call.processKey), engine.sync, {
    instanceId: call.instanceId,
    executionId: executionId(call.instanceId, 'start'),
    businessKey: call.businessKey,
    variables: call.variables,
    now,
    calledBy: call.calledBy,
  });
}
