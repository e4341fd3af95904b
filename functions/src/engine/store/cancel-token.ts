import type { Firestore } from '@google-cloud/firestore';
import type { Engine } from '../engine';
import { checkBasis, tokenBasis } from '../repair-basis';
import { cancelToken } from '../transitions';
import { applyAndSettle, loadExecution, loadInstance, loadTokens } from './apply';
import {
  appliedRepair,
  newRequestId,
  type RepairBinding,
  RepairRefusedError,
  type RepairOptions,
  runRepair,
} from './repair-request';
import { changedBy, recordOnInstance, type Repaired } from './token-repair';
import { modelOf } from './versions';

/** What a cancel's request id is bound to: the token. */
export const cancelBinding = (executionId: string): RepairBinding => ({ kind: 'cancel-token', target: executionId });

/**
 * Repair: end a token where it stands. Idempotent per request id (default: a
 * new one per call), as `moveToken` (move-token.ts). `activityId`: where the
 * token stood (as it is now, also when already applied), for the operator's
 * summary. With `options.expect` (its preview's basis), refused if the token
 * moved or changed state since.
 */
export async function cancelTokenRun(
  db: Firestore,
  engine: Engine,
  processInstanceId: string,
  executionIdValue: string,
  now: Date,
  requestId: string = newRequestId(),
  options: RepairOptions = {},
): Promise<Repaired & { activityId: string }> {
  return runRepair(
    db,
    async (uow) => {
      const instance = await loadInstance(uow, processInstanceId);
      const execution = await loadExecution(uow, processInstanceId, executionIdValue);
      if (instance === null || execution === null || execution.processInstanceId !== instance.id) {
        throw new RepairRefusedError(`execution ${executionIdValue} is not a token of ${processInstanceId}`);
      }
      const applied = appliedRepair(instance, requestId, cancelBinding(execution.id));
      if (applied !== null)
        return { ...(await changedBy(uow, instance.id, applied)), activityId: execution.activityId };
      const basis = tokenBasis(execution);
      checkBasis(options.expect, basis, `token ${execution.id}`);
      if (execution.status === 'ENDED' || execution.status === 'CANCELLED')
        throw new RepairRefusedError(`execution ${executionIdValue} has already ${execution.status.toLowerCase()}`);
      const model = await modelOf(uow, engine, instance);
      const changed = await applyAndSettle(
        uow,
        engine,
        cancelToken({ instance, execution, tokens: await loadTokens(uow, instance.id) }, now, model, engine.sync),
        now,
      );
      await recordOnInstance(
        uow,
        instance.id,
        cancelBinding(execution.id),
        requestId,
        execution.id,
        changed,
        now,
        options.actor,
      );
      return { ...changed, activityId: execution.activityId, alreadyApplied: false, basis };
    },
    options.sink === undefined ? {} : { sink: options.sink },
  );
}
