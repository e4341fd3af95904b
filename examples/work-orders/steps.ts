import type { DocumentReference, DocumentSnapshot, Firestore } from '@google-cloud/firestore';
import {
  type AppContext,
  type InstanceState,
  type StepHandler,
  isAlreadyExists,
  PermanentJobError,
  recordId,
} from '../../functions/src/app';
import { type Billing, billingOf } from './billing';

/** The topic the provider reads work orders (and reminders) from. */
export const PROVIDER_TOPIC = 'work-orders';
/** The collections the example's steps write: one invoice per work order, one record per escalation. */
export const INVOICES = 'invoices';
export const ESCALATIONS = 'escalations';

/** The invoice of a work order: hashed, so any workOrderId (`WO/7`, `..`) is a valid id; one per work order. */
export const invoiceRef = (db: Firestore, workOrderId: string): DocumentReference =>
  db.collection(INVOICES).doc(recordId('invoice', workOrderId));
/** The record of one escalation (one per escalation job): a re-run of the job finds it. */
export const escalationRef = (db: Firestore, jobId: string): DocumentReference =>
  db.collection(ESCALATIONS).doc(recordId('escalation', jobId));

/** Whether a text could be a document id as it is (an invoice written before ids were hashed was stored under the raw workOrderId). */
const isDocumentId = (text: string): boolean =>
  text.length > 0 &&
  !text.includes('/') &&
  text !== '.' &&
  text !== '..' &&
  !/^__.*__$/.test(text) &&
  Buffer.byteLength(text, 'utf8') <= 1_500;
/** Where an invoice was written before ids were hashed (`invoices/{workOrderId}`); null when the key could not have been an id. */
const legacyInvoiceRef = (db: Firestore, workOrderId: string): DocumentReference | null =>
  isDocumentId(workOrderId) ? db.collection(INVOICES).doc(workOrderId) : null;

/** The invoice fields of what was billed (besides workOrderId, instance, job, completedItems, createdAt). */
function billed(billing: Billing): {
  readonly billedItems: number | null;
  readonly lineItemCount: number | null;
  readonly report: string | null;
} {
  if (billing.from === 'COMPLETED_ITEMS')
    return { billedItems: billing.completedItems, lineItemCount: null, report: null };
  return {
    billedItems: billing.lineItemCount,
    lineItemCount: billing.lineItemCount,
    report: billing.from === 'REPORT' ? billing.uri : null,
  };
}

function workOrderIdOf(instance: InstanceState): string {
  const value = instance.variables['workOrderId'];
  return typeof value === 'string' && value.length > 0 ? value : instance.businessKey;
}

/** The async steps of bpmn/work-order-execution.bpmn, by task id. */
export function workOrderSteps(ctx: AppContext): Readonly<Record<string, StepHandler>> {
  return {
    /**
     * Publishes the work order to the provider. At-least-once: a re-run
     * publishes again, and the provider dedups by workOrderId (the jobId
     * attribute identifies the hand-over).
     */
    handOverWorkOrder: async ({ job, instance }) => {
      const workOrderId = workOrderIdOf(instance);
      const data = Buffer.from(
        JSON.stringify({ workOrderId, processInstanceId: instance.id, variables: instance.variables }),
      );
      const messageId = await ctx.publish(PROVIDER_TOPIC, data, {
        eventType: 'WorkOrderHandedOver',
        workOrderId,
        jobId: job.id,
      });
      return { handedOverMessageId: messageId };
    },
    /**
     * The work order is overdue (its completionDeadline passed without a
     * WorkOrderCompleted): records the escalation, then publishes a reminder
     * (`eventType: WorkOrderOverdue`) to the provider. Idempotent: the record
     * is created once; a re-run (a crash after the record, a lost answer)
     * finds it and publishes the reminder again, which the provider dedups
     * by the jobId attribute.
     */
    escalateOverdueWorkOrder: async ({ job, instance, now }) => {
      const workOrderId = workOrderIdOf(instance);
      const deadline = instance.variables['completionDeadline'];
      try {
        await escalationRef(ctx.db(), job.id).create({
          workOrderId,
          processInstanceId: instance.id,
          jobId: job.id,
          completionDeadline: typeof deadline === 'string' ? deadline : null,
          escalatedAt: now,
        });
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
      }
      const data = Buffer.from(
        JSON.stringify({ workOrderId, processInstanceId: instance.id, overdueSince: now.toISOString() }),
      );
      const messageId = await ctx.publish(PROVIDER_TOPIC, data, {
        eventType: 'WorkOrderOverdue',
        workOrderId,
        jobId: job.id,
      });
      return { escalatedAt: now.toISOString(), reminderMessageId: messageId };
    },
    /**
     * Bills a work order once: its invoice with create(). A re-run finds the
     * invoice and succeeds without billing again; an invoice of another
     * instance (a double token that reached billing) is not doubled. The
     * same commit asserts that no invoice exists under the raw workOrderId,
     * where invoices were written before their ids were hashed.
     *
     * What it bills (billedItems): the line items of the completion report
     * the `completionReport` variable names (a claim check, read pinned to
     * its generation), else the inline `lineItems`, else `completedItems`. A
     * report that is missing, replaced, not JSON or not a report fails the
     * job for good (PermanentJobError: INCIDENT / JOB_FAILED with the
     * reason), unless the invoice exists already (a re-run after it was
     * written: the object may be gone by then); a storage outage is thrown
     * and retried.
     */
    createInvoice: async ({ job, instance, now }) => {
      const workOrderId = workOrderIdOf(instance);
      const db = ctx.db();
      const ref = invoiceRef(db, workOrderId);
      const legacy = legacyInvoiceRef(db, workOrderId);
      const existing = async (): Promise<DocumentSnapshot | null> => {
        const [current, old] = await db.getAll(ref, ...(legacy === null ? [] : [legacy]));
        const found = current?.exists === true ? current : old;
        return found?.exists === true ? found : null;
      };
      const already = (found: DocumentSnapshot): Readonly<Record<string, unknown>> => ({
        invoiceId: found.id,
        invoiceAlreadyExisted: true,
        invoicedByInstance: found.get('processInstanceId') ?? null,
      });
      const billing = await billingOf(instance.variables, ctx.readClaim, workOrderId);
      if ('ok' in billing) {
        const found = await existing();
        if (found !== null) return already(found);
        throw new PermanentJobError(`work order ${workOrderId} cannot be invoiced: ${billing.why}`);
      }
      const fields = billed(billing);
      const batch = db.batch();
      batch.create(ref, {
        workOrderId,
        processInstanceId: instance.id,
        jobId: job.id,
        completedItems: instance.variables['completedItems'] ?? null,
        ...fields,
        createdAt: now,
      });
      // A delete that changes nothing and fails the commit if the document exists.
      if (legacy !== null) batch.delete(legacy, { exists: false });
      try {
        await batch.commit();
        return { invoiceId: ref.id, billedItems: fields.billedItems };
      } catch (err) {
        if (!isAlreadyExists(err)) throw err;
        const found = await existing();
        if (found === null) throw err;
        return already(found);
      }
    },
  };
}
