/**
 * The chaos app's own steps, those of ../bpmn/work-order-inspection.bpmn:
 * "Inspect work order" throws BpmnError DEFECTS_FOUND for a work order that
 * starts with inspection findings (its error boundary event takes the token
 * to "Record the defects"), and "Record the defects" writes one record per
 * work order. Both are idempotent: a re-run throws the same error, or finds
 * the record.
 */
import type { DocumentReference, Firestore } from '@google-cloud/firestore';
import {
  type AppContext,
  BpmnError,
  type InstanceState,
  isAlreadyExists,
  recordId,
  type StepHandler,
} from '../../../../functions/src/app';

/** The second model's names, as the plan, the approver and the evaluation read them. */
export const INSPECTION = {
  processKey: 'work-order-inspection',
  inspectTaskId: 'inspectWorkOrder',
  errorBoundaryId: 'defectsFound',
  errorCode: 'DEFECTS_FOUND',
  defectsTaskId: 'recordDefects',
  userTaskId: 'approveWorkOrder',
  joinId: 'join',
  /** The start variable: how many findings the inspection makes (0: it passes). */
  findingsVariable: 'inspectionFindings',
  /** Branches the fork starts and the join waits for: the tranches, the inspection, the approval. */
  branches: 3,
} as const;

/** One record per work order whose inspection found defects. */
export const DEFECTS = 'defects';
export const defectRef = (db: Firestore, workOrderId: string): DocumentReference =>
  db.collection(DEFECTS).doc(recordId('defects', workOrderId));

function workOrderIdOf(instance: InstanceState): string {
  const value = instance.variables['workOrderId'];
  return typeof value === 'string' && value.length > 0 ? value : instance.businessKey;
}

function findingsOf(instance: InstanceState): number {
  const value = instance.variables[INSPECTION.findingsVariable];
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

export function inspectionSteps(ctx: AppContext): Readonly<Record<string, StepHandler>> {
  return {
    /** A business outcome, not a failure: findings above 0 are a BPMN error the model catches (never retried). */
    inspectWorkOrder: async ({ instance }) => {
      const findings = findingsOf(instance);
      if (findings > 0)
        throw new BpmnError(INSPECTION.errorCode, `${findings} findings on work order ${workOrderIdOf(instance)}`);
      return { inspection: 'PASSED' };
    },
    /** Records the defects once per work order: a re-run (a crash, a repair that moved the token back) finds the record. */
    recordDefects: async ({ job, instance, now }) => {
      const workOrderId = workOrderIdOf(instance);
      try {
        await defectRef(ctx.db(), workOrderId).create({
          workOrderId,
          processInstanceId: instance.id,
          jobId: job.id,
          findings: findingsOf(instance),
          recordedAt: now,
        });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      return { inspection: 'DEFECTS_RECORDED' };
    },
  };
}
