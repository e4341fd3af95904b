import type { Firestore } from '@google-cloud/firestore';
import type { Engine } from '../engine';
import { cancelToken } from '../transitions';
import { applyAndSettle, loadExecution, loadInstance } from './apply';
import { appliedRepair, newRequestId, RepairRefusedError, type RepairOptions, runRepair } from './repair-request';
import { changedBy, recordOnInstance, type Repaired } from './token-repair';

/**
 * Repair: end a token where it stands. Idempotent per request id (default: a
 * new one per call), as `moveToken` (move-token.ts). `activityId`: where the
 * token stood (as it is now, also when already applied), for the operator's summary.
 */
export async function cancelTokenRun(db: Firestore, engine: Engine, processInstanceId: string, executionIdValue: string, now: Date, requestId: string = newRequestId(), options: RepairOptions = {}): Promise<Repaired & { activityId: string }> {
  return runRepair(db, async (uow) => {
    const instance = await loadInstance(uow, processInstanceId);
    const execution = await loadExecution(uow, processInstanceId, executionIdValue);
    if (instance === null || execution === null || execution.processInstanceId !== instance.id) {
      throw new RepairRefusedError(`execution ${executionIdValue} is not a token of ${processInstanceId}`);
    }
    const applied = appliedRepair(instance, requestId);
    if (applied !== null) return { ...(await changedBy(uow, instance.id, applied)), activityId: execution.activityId };
    if (execution.status === 'ENDED' || execution.status === 'CANCELLED') throw new RepairRefusedError(`execution ${executionIdValue} has already ${execution.status.toLowerCase()}`);
    const changed = await applyAndSettle(uow, engine, cancelToken({ instance, execution }, now), now);
    await recordOnInstance(uow, instance.id, 'cancel-token', requestId, execution.id, changed, now, options.actor);
    return { ...changed, activityId: execution.activityId, alreadyApplied: false };
  }, options.sink === undefined ? {} : { sink: options.sink });
}
