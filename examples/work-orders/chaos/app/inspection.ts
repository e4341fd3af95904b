/**
 * The chaos app's own steps, those of ../bpmn/work-order-inspection.bpmn:
 * - "Inspect work order" throws BpmnError DEFECTS_FOUND while the work
 *   order has inspection findings left (the error boundary event on the
 *   subprocess "Inspection" takes the token to "Record the defects"), and
 *   passes once none is left;
 * - "Record the defects" writes one record per round and lowers the
 *   findings by one, so the token goes round the loop once per finding;
 * - "Tally the approvals" decides on the answers the multi-instance "Ask
 *   the approvers" collected.
 * All are idempotent: a re-run (a crash, a repair that moved the token
 * back) throws the same error, finds its round's record, or decides the
 * same, because each computes from the variables its job runs with, never
 * from what an earlier run stored.
 */
import type { DocumentReference, Firestore } from '@google-cloud/firestore';
import {
  type AppContext,
  BpmnError,
  type InstanceState,
  isAlreadyExists,
  PermanentJobError,
  recordId,
  type StepHandler,
} from '../../../../functions/src/app';

/** The second model's names, as the plan, the approver and the evaluation read them. */
export const INSPECTION = {
  processKey: 'work-order-inspection',
  /** The subprocess the loop goes back into; the error boundary event is on it. */
  subprocessId: 'inspection',
  inspectTaskId: 'inspectWorkOrder',
  errorBoundaryId: 'defectsFound',
  errorCode: 'DEFECTS_FOUND',
  defectsTaskId: 'recordDefects',
  userTaskId: 'approveWorkOrder',
  joinId: 'join',
  /** The start variable: how many findings the inspection makes (0: it passes at once); each round lowers it by one. */
  findingsVariable: 'inspectionFindings',
  /** What the inspection's last run says: PASSED. */
  outcomeVariable: 'inspection',
  /** Branches the fork starts and the join waits for: the tranches, the inspection, the approval. */
  branches: 3,
} as const;

/** "Ask the approvers", the parallel multi-instance user task, and the step after it. */
export const APPROVALS = {
  activityId: 'askApprovers',
  /** The items' model: the activity alone (engine: bpmn/item-body.ts). */
  itemProcessKey: `${INSPECTION.processKey}#askApprovers`,
  /** The start variable it runs over (a list of names), and each item's copy of its entry. */
  collectionVariable: 'approvers',
  elementVariable: 'approver',
  /** What an approver answers (true: approves), collected into the output collection in item order. */
  answerVariable: 'approves',
  outputVariable: 'approverAnswers',
  /** The completion condition: the first yes, or the third answer; as the model writes it. */
  enoughAnswers: 3,
  tallyTaskId: 'tallyApprovals',
  /** What "Tally the approvals" decides: APPROVED with a yes among the answers, else REJECTED. */
  decisionVariable: 'approvalDecision',
} as const;

/** The reason the engine gives an item it terminates because the completion condition held (engine/item-transitions.ts). */
export const TERMINATED_BY_CONDITION = `the completion condition of ${APPROVALS.activityId} holds`;

/** One record per round of the loop: the round that found `findingsLeft` findings (k, k - 1, … 1 for k findings). */
export const DEFECTS = 'defects';
export const defectRef = (db: Firestore, workOrderId: string, findingsLeft: number): DocumentReference =>
  db.collection(DEFECTS).doc(recordId('defects', workOrderId, String(findingsLeft)));

function workOrderIdOf(instance: InstanceState): string {
  const value = instance.variables['workOrderId'];
  return typeof value === 'string' && value.length > 0 ? value : instance.businessKey;
}

function findingsOf(instance: InstanceState): number {
  const value = instance.variables[INSPECTION.findingsVariable];
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/** The decision on the collected answers: a yes among them approves (an item terminated before it answered has null). */
export function decide(answers: unknown): { approvalDecision: 'APPROVED' | 'REJECTED'; approvalsAnswered: number } {
  const list = Array.isArray(answers) ? (answers as unknown[]) : [];
  return {
    approvalDecision: list.includes(true) ? 'APPROVED' : 'REJECTED',
    approvalsAnswered: list.filter((a) => a !== null && a !== undefined).length,
  };
}

export function inspectionSteps(ctx: AppContext): Readonly<Record<string, StepHandler>> {
  return {
    /** A business outcome, not a failure: findings left are a BPMN error the model catches (never retried). */
    inspectWorkOrder: async ({ instance }) => {
      const findings = findingsOf(instance);
      if (findings > 0)
        throw new BpmnError(INSPECTION.errorCode, `${findings} findings on work order ${workOrderIdOf(instance)}`);
      return { [INSPECTION.outcomeVariable]: 'PASSED' };
    },
    /**
     * Records this round's defects and lowers the findings by one. The round
     * is the findings its job runs with: a re-run of the same job (its
     * commit lost, a repair that moved the token back before it finished)
     * finds its own record and lowers from the same value, never twice.
     */
    recordDefects: async ({ job, instance, now }) => {
      const workOrderId = workOrderIdOf(instance);
      const findings = findingsOf(instance);
      if (findings <= 0)
        throw new PermanentJobError(`work order ${workOrderId}: "Record the defects" ran with no findings left`);
      try {
        await defectRef(ctx.db(), workOrderId, findings).create({
          workOrderId,
          processInstanceId: instance.id,
          jobId: job.id,
          findingsLeft: findings,
          recordedAt: now,
        });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      return { [INSPECTION.findingsVariable]: findings - 1, [INSPECTION.outcomeVariable]: 'DEFECTS_RECORDED' };
    },
    /** Decides on the answers the approvers' items collected (null for an item ended before it answered). */
    tallyApprovals: async ({ instance }) => decide(instance.variables[APPROVALS.outputVariable]),
  };
}
