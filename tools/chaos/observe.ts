import type { Firestore } from '@google-cloud/firestore';
import { COLLECTIONS } from '../../functions/src/engine/store/collections';
import { INBOX } from '../../functions/src/inbox/document';
import type { ChaosSnapshot } from './evaluate';

/** Reads what the evaluation needs; the run has a project of its own, so whole collections are this run's. */
export async function readChaosSnapshot(db: Firestore): Promise<ChaosSnapshot> {
  const [inbox, instances, jobs, invoices] = await Promise.all([
    db.collection(INBOX).select('status', 'reason', 'processInstanceId', 'deadLetter', 'requeuedAt').get(),
    db.collection(COLLECTIONS.instances).select('businessKey', 'status', 'correlatedMessages').get(),
    db.collection(COLLECTIONS.jobs).where('activityId', '==', 'createInvoice').select('processInstanceId').get(),
    db.collection(COLLECTIONS.invoices).select('workOrderId', 'processInstanceId').get(),
  ]);
  const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
  return {
    inbox: inbox.docs.map((d) => ({
      id: d.id,
      status: String(d.get('status')),
      reason: text(d.get('reason')),
      processInstanceId: text(d.get('processInstanceId')),
      deadLettered: d.get('deadLetter') !== undefined && d.get('deadLetter') !== null,
      requeued: d.get('requeuedAt') !== undefined && d.get('requeuedAt') !== null,
    })),
    instances: instances.docs.map((d) => {
      const trail: unknown = d.get('correlatedMessages');
      return { id: d.id, businessKey: String(d.get('businessKey')), status: String(d.get('status')), correlatedMessages: Array.isArray(trail) ? trail.map(String) : [] };
    }),
    invoiceJobs: jobs.docs.map((d) => ({ processInstanceId: String(d.get('processInstanceId')) })),
    invoices: invoices.docs.map((d) => ({ workOrderId: String(d.get('workOrderId')), processInstanceId: String(d.get('processInstanceId')) })),
  };
}

/** Progress while the run settles: OPEN documents left, PENDING jobs left, documents in all. */
export async function openWork(db: Firestore): Promise<{ open: number; pendingJobs: number; documents: number }> {
  const [open, pending, all] = await Promise.all([
    db.collection(INBOX).where('status', '==', 'OPEN').count().get(),
    db.collection(COLLECTIONS.jobs).where('status', '==', 'PENDING').count().get(),
    db.collection(INBOX).count().get(),
  ]);
  return { open: open.data().count, pendingJobs: pending.data().count, documents: all.data().count };
}
