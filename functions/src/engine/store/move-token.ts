import type { Firestore } from '@google-cloud/firestore';
import type { Engine } from '../engine';
import { executionId as newExecutionId } from '../ids';
import type { Transition } from '../state';
import { checkBasis, tokenBasis, tokensBasis } from '../repair-basis';
import { moveRefusal, placeToken } from '../transitions';
import { applyAndSettle, loadExecution, loadInstance, loadTokens } from './apply';
import { asCorrelationKey, refs } from './collections';
import { readInstanceDoc } from './instance-doc';
import {
  appliedRepair,
  newRequestId,
  type RepairBinding,
  RepairRefusedError,
  type RepairOptions,
  runRepair,
} from './repair-request';
import { changedBy, recordOnInstance, type Repaired } from './token-repair';
import type { UnitOfWork } from './unit-of-work';
import { modelOf } from './versions';

/** What `inbox repair move-token` asks for. */
export interface MoveTokenRequest {
  readonly processInstanceId: string;
  /** The token to move; null creates a new token (the article's "change state" that adds one). */
  readonly executionId: string | null;
  readonly activityId: string;
  /** Allow a duplicate waiting point (it is still recorded as an incident). */
  readonly force: boolean;
  readonly now: Date;
  /** Chosen once per command run (repair-request.ts); default: a new one per call. */
  readonly requestId?: string;
}

/** What a move's request id is bound to: the token (or a new one), the activity, and whether forced. */
export function moveBinding(request: Pick<MoveTokenRequest, 'executionId' | 'activityId' | 'force'>): RepairBinding {
  return {
    kind: 'move-token',
    target: `${request.executionId ?? 'new token'} to ${request.activityId}${request.force ? ' (forced)' : ''}`,
  };
}

/**
 * Repair: move (or add) a token to an activity and run it, guarded against
 * double tokens. Idempotent per request id: a new token's id derives from
 * it, and a re-run that finds the request recorded on the instance reports
 * the first attempt's token and jobs instead of moving anything again. A
 * token that has ended or was cancelled is never moved (add a new one):
 * whatever it was waiting for has let it go. With `options.expect` (its
 * preview's basis), refused if the token (or, for a new token, the
 * instance's tokens) changed since.
 */
export async function moveToken(
  db: Firestore,
  engine: Engine,
  request: MoveTokenRequest,
  options: RepairOptions = {},
): Promise<Repaired & { executionId: string; fromActivityId: string | null }> {
  const requestId = request.requestId ?? newRequestId();
  return runRepair(
    db,
    async (uow) => {
      const instance = await loadInstance(uow, request.processInstanceId);
      if (instance === null)
        throw new RepairRefusedError(`process instance ${request.processInstanceId} does not exist`);
      const applied = appliedRepair(instance, requestId, moveBinding(request));
      if (applied !== null)
        return {
          ...(await changedBy(uow, instance.id, applied)),
          executionId: String(applied.details.executionId),
          fromActivityId: null,
        };
      let execution = request.executionId === null ? null : await loadExecution(uow, instance.id, request.executionId);
      if (request.executionId !== null && (execution === null || execution.processInstanceId !== instance.id)) {
        throw new RepairRefusedError(`execution ${request.executionId} is not a token of ${instance.id}`);
      }
      const basis =
        execution === null
          ? tokensBasis(instance, (await readInstanceDoc(uow, instance.id))?.tokens ?? {})
          : tokenBasis(execution);
      checkBasis(
        options.expect,
        basis,
        execution === null ? `the tokens of instance ${instance.id}` : `token ${execution.id}`,
      );
      if (execution !== null && (execution.status === 'ENDED' || execution.status === 'CANCELLED')) {
        throw new RepairRefusedError(
          `execution ${execution.id} has ${execution.status === 'ENDED' ? 'ended' : 'been cancelled'} at ${execution.activityId}: an ended token is never moved again; add a new token at the activity instead (move-token without a token id)`,
        );
      }
      // Where the token stood before (null: a new token), for the operator's summary.
      const fromActivityId = execution?.activityId ?? null;
      if (execution === null) {
        const id = newExecutionId(instance.id, `repair:${requestId}`);
        execution = {
          id,
          processInstanceId: instance.id,
          activityId: request.activityId,
          status: 'ACTIVE',
          step: 0,
          jobId: null,
          waitingFor: null,
          createdAt: request.now,
          updatedAt: request.now,
        };
      }
      const model = await modelOf(uow, engine, instance);
      const refusal = moveRefusal(model, execution, request.activityId, instance.activeExecutionIds);
      if (refusal !== null) throw new RepairRefusedError(refusal);
      const t = placeToken(
        model,
        engine.sync,
        { instance, execution, tokens: await loadTokens(uow, instance.id) },
        request.activityId,
        request.now,
      );
      if (!request.force) await refuseDuplicates(uow, t);
      const changed = await applyAndSettle(uow, engine, t, request.now);
      await recordOnInstance(
        uow,
        instance.id,
        moveBinding(request),
        requestId,
        execution.id,
        changed,
        request.now,
        options.actor,
      );
      return { ...changed, executionId: execution.id, fromActivityId, alreadyApplied: false, basis };
    },
    options.sink === undefined ? {} : { sink: options.sink },
  );
}

async function refuseDuplicates(uow: UnitOfWork, t: Transition): Promise<void> {
  for (const point of t.subscribe) {
    const keyDoc = asCorrelationKey(
      await uow.get(refs.correlationKey(uow.db, point.correlationKey)),
      point.correlationKey,
    );
    const rival = keyDoc.waiting.find(
      (w) => w.messageName === point.messageName && w.executionId !== point.executionId,
    );
    if (rival !== undefined) {
      throw new RepairRefusedError(
        `refused: execution ${rival.executionId} of ${rival.processInstanceId} already waits for ${point.messageName} with key ${point.correlationKey}; a second waiting point would make the next message ambiguous (use --force to do it anyway)`,
      );
    }
  }
}
