import type { DocumentSnapshot, Firestore } from '@google-cloud/firestore';
import { isRefusedAsExisting, PermanentFailureError } from '../core/errors';
import { refs } from '../engine/store/collections';
import type { InstanceState, JobState } from '../engine/state';
import type { PayloadStore } from '../storage/payload-store';
import { type Billing, billingOf } from './completion-report';

/**
 * Async task handlers, registered by BPMN task id. They run in runJob,
 * outside any transaction, and may run more than once (Cloud Tasks is
 * at-least-once, and a crash after the side effect re-runs the job): each
 * must be idempotent. They return variables to merge into the instance.
 */
export interface JobContext {
  readonly job: JobState;
  readonly instance: InstanceState;
  readonly now: Date;
}
export type AsyncHandler = (ctx: JobContext) => Promise<Readonly<Record<string, unknown>>>;

/**
 * What a handler throws for a failure no retry can heal (the provider
 * refuses the work order for good, the data can never be valid): the job is
 * FAILED at once, without spending INBOX_JOB_MAX_ATTEMPTS, and its instance
 * shows INCIDENT / JOB_FAILED with this message, for an operator to repair
 * (move or cancel the token). Anything else a handler throws is retried.
 * Also recognised as the `cause` of the error thrown.
 *
 * @example throw new PermanentJobError(`work order ${id} is unknown to the provider`);
 */
export class PermanentJobError extends PermanentFailureError {
  override readonly name: string = 'PermanentJobError';
}

/** What the work-order handlers need; createRuntime (runtime.ts) builds it, tests pass their own. */
export interface WorkOrderHandlerDeps {
  /** The Firestore client, created on the first call: createInvoice writes `invoices/` with it. */
  readonly db: () => Firestore;
  /**
   * Publishes to a topic, returns the message id. Locally the Pub/Sub
   * emulator (PUBSUB_EMULATOR_HOST, read by the client itself); the topic
   * must exist there, as in the project.
   */
  readonly publish: (topic: string, data: Buffer, attributes: Readonly<Record<string, string>>) => Promise<string>;
  /** The topic handOverWorkOrder and escalateOverdueWorkOrder publish to (INBOX_PROVIDER_TOPIC, default `work-orders`). */
  readonly providerTopic: string;
  /** Cloud Storage, created on first use: createInvoice reads the completion report a claim check names, pinned to its generation. */
  readonly payloadStore: () => PayloadStore;
}

/** The invoice fields of what was billed (besides workOrderId, instance, job, completedItems, createdAt). */
function billed(billing: Billing): { readonly billedItems: number | null; readonly lineItemCount: number | null; readonly report: string | null } {
  if (billing.from === 'COMPLETED_ITEMS') return { billedItems: billing.completedItems, lineItemCount: null, report: null };
  return { billedItems: billing.lineItemCount, lineItemCount: billing.lineItemCount, report: billing.from === 'REPORT' ? billing.uri : null };
}

function workOrderIdOf(instance: InstanceState): string {
  const value = instance.variables['workOrderId'];
  return typeof value === 'string' && value.length > 0 ? value : instance.businessKey;
}

/** Handlers of bpmn/work-order-execution.bpmn. */
export function workOrderHandlers(deps: WorkOrderHandlerDeps): Readonly<Record<string, AsyncHandler>> {
  return {
    /**
     * Publishes the work order to the provider. At-least-once: a re-run
     * publishes again, and the provider dedups by workOrderId (the jobId
     * attribute identifies the hand-over).
     */
    handOverWorkOrder: async ({ job, instance }) => {
      const workOrderId = workOrderIdOf(instance);
      const data = Buffer.from(JSON.stringify({ workOrderId, processInstanceId: instance.id, variables: instance.variables }));
      const messageId = await deps.publish(deps.providerTopic, data, { eventType: 'WorkOrderHandedOver', workOrderId, jobId: job.id });
      return { handedOverMessageId: messageId };
    },
    /**
     * The work order is overdue (its completionDeadline passed without a
     * WorkOrderCompleted): records the escalation, then publishes a reminder
     * (`eventType: WorkOrderOverdue`) to the provider. Idempotent: the record
     * is `escalations/{id(["escalation", jobId])}`, created once; a re-run
     * (a crash after the record, a lost answer) finds it and publishes the
     * reminder again, which the provider dedups by the jobId attribute.
     */
    escalateOverdueWorkOrder: async ({ job, instance, now }) => {
      const workOrderId = workOrderIdOf(instance);
      const db = deps.db();
      const ref = refs.escalation(db, job.id);
      const deadline = instance.variables['completionDeadline'];
      try {
        await ref.create({ workOrderId, processInstanceId: instance.id, jobId: job.id, completionDeadline: typeof deadline === 'string' ? deadline : null, escalatedAt: now });
      } catch (err) {
        if (!isRefusedAsExisting(err)) throw err;
      }
      const data = Buffer.from(JSON.stringify({ workOrderId, processInstanceId: instance.id, overdueSince: now.toISOString() }));
      const messageId = await deps.publish(deps.providerTopic, data, { eventType: 'WorkOrderOverdue', workOrderId, jobId: job.id });
      return { escalatedAt: now.toISOString(), reminderMessageId: messageId };
    },
    /**
     * Bills a work order once: invoices/{id(["invoice", workOrderId])} with
     * create(). A re-run finds the invoice and succeeds without billing
     * again; an invoice of another instance (a double token that reached
     * billing) is not doubled. The same commit asserts that no invoice
     * exists under the raw workOrderId, where invoices were written before
     * their ids were hashed, so those still count.
     *
     * What it bills (billedItems): the line items of the completion report
     * the `completionReport` variable names (a claim check: read pinned to
     * its generation; completion-report.ts), else the inline `lineItems`,
     * else `completedItems`. A report that is missing, replaced, not JSON or
     * not a report fails the job for good (PermanentJobError: INCIDENT /
     * JOB_FAILED with the reason), unless the invoice exists already (a
     * re-run after it was written: the object may be gone by then); a
     * storage outage is thrown and retried.
     */
    createInvoice: async ({ job, instance, now }) => {
      const workOrderId = workOrderIdOf(instance);
      const db = deps.db();
      const ref = refs.invoice(db, workOrderId);
      const legacy = refs.legacyInvoice(db, workOrderId);
      const existing = async (): Promise<DocumentSnapshot | null> => {
        const [current, old] = await db.getAll(ref, ...(legacy === null ? [] : [legacy]));
        const found = current?.exists === true ? current : old;
        return found?.exists === true ? found : null;
      };
      const already = (found: DocumentSnapshot): Readonly<Record<string, unknown>> => ({ invoiceId: found.id, invoiceAlreadyExisted: true, invoicedByInstance: found.get('processInstanceId') ?? null });
      const billing = await billingOf(instance.variables, deps.payloadStore, workOrderId);
      if ('ok' in billing) {
        const found = await existing();
        if (found !== null) return already(found);
        throw new PermanentJobError(`work order ${workOrderId} cannot be invoiced: ${billing.why}`);
      }
      const fields = billed(billing);
      const batch = db.batch();
      batch.create(ref, { workOrderId, processInstanceId: instance.id, jobId: job.id, completedItems: instance.variables['completedItems'] ?? null, ...fields, createdAt: now });
      // A delete that changes nothing and fails the commit if the document exists.
      if (legacy !== null) batch.delete(legacy, { exists: false });
      try {
        await batch.commit();
        return { invoiceId: ref.id, billedItems: fields.billedItems };
      } catch (err) {
        if (!isRefusedAsExisting(err)) throw err;
        const found = await existing();
        if (found === null) throw err;
        return already(found);
      }
    },
  };
}
