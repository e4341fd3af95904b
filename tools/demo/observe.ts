import type { Firestore, Query } from '@google-cloud/firestore';
import { COLLECTIONS } from '../../functions/src/engine/store/collections';
import { INBOX } from '../../functions/src/inbox/document';
import type { InboxView, Snapshot } from './evaluate';

const withPrefix = (query: Query, field: string, prefix: string): Query => query.where(field, '>=', prefix).where(field, '<', `${prefix}\uf8ff`);

/**
 * Reads this run's state: inbox documents of its work orders (by key) and
 * its poison messages (by id), the process instances, invoices and invoice
 * jobs of its work orders. Earlier runs on the same emulators are ignored.
 */
export async function readSnapshot(db: Firestore, prefix: string, poisonIds: readonly string[]): Promise<Snapshot> {
  const [inbox, poison, instances, invoices, jobs] = await Promise.all([
    withPrefix(db.collection(INBOX), 'correlationKey', prefix).get(),
    poisonIds.length === 0 ? Promise.resolve([]) : db.getAll(...poisonIds.map((id) => db.collection(INBOX).doc(id))),
    withPrefix(db.collection(COLLECTIONS.instances), 'businessKey', prefix).get(),
    withPrefix(db.collection(COLLECTIONS.invoices), 'workOrderId', prefix).get(),
    db.collection(COLLECTIONS.jobs).where('activityId', '==', 'createInvoice').select('processInstanceId').get(),
  ]);
  const view = (id: string, d: Record<string, unknown>): InboxView => ({
    id,
    status: String(d.status),
    reason: typeof d.reason === 'string' ? d.reason : null,
    correlationKey: typeof d.correlationKey === 'string' ? d.correlationKey : null,
    correlatedVia: typeof d.correlatedVia === 'string' ? d.correlatedVia : null,
    deadLettered: d.deadLetter !== undefined && d.deadLetter !== null,
  });
  const instanceList = instances.docs.map((d) => ({ id: d.id, businessKey: String(d.get('businessKey')), status: String(d.get('status')) }));
  const ours = new Set(instanceList.map((i) => i.id));
  return {
    inbox: [...inbox.docs.map((d) => view(d.id, d.data())), ...poison.flatMap((d) => (d.exists ? [view(d.id, d.data() ?? {})] : []))],
    instances: instanceList,
    invoices: invoices.docs.map((d) => ({ workOrderId: String(d.get('workOrderId')), processInstanceId: String(d.get('processInstanceId')) })),
    invoiceJobs: jobs.docs.map((d) => ({ processInstanceId: String(d.get('processInstanceId')) })).filter((j) => ours.has(j.processInstanceId)),
  };
}
