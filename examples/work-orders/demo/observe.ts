import type { Firestore, Query } from '@google-cloud/firestore';
import { COLLECTIONS } from '../../../functions/src/engine/store/collections';
import { instanceJobs, instanceTokens } from '../../../functions/src/engine/store/instance-doc';
import { INBOX } from '../../../functions/src/inbox/document';
import type { InboxView, Snapshot } from './evaluate';
import type { ClaimView } from './large-reports';
import { ESCALATIONS, INVOICES } from '../local/names';

/** What Firestore holds of a run; the provider's reminders and reports, `inbox waiting` and the objects come from elsewhere. */
export type StoredState = Omit<Snapshot, 'reminders' | 'waitingListed' | 'objects' | 'payloadObjects' | 'reportsSent'>;

/** A claim field of an inbox document (`reference`, `offloaded`), or null when absent or not of the expected form. */
function claimOf(value: unknown): ClaimView | null {
  if (typeof value !== 'object' || value === null) return null;
  const c = value as Record<string, unknown>;
  if (
    typeof c.uri !== 'string' ||
    typeof c.bucket !== 'string' ||
    typeof c.object !== 'string' ||
    typeof c.generation !== 'string'
  )
    return null;
  return {
    uri: c.uri,
    bucket: c.bucket,
    object: c.object,
    generation: c.generation,
    bytes: typeof c.bytes === 'number' ? c.bytes : null,
  };
}

const countOf = (value: unknown): number | null => (typeof value === 'number' ? value : null);

/** Firestore's `in` takes at most 30 values. */
const IN_LIMIT = 30;

async function byInstance(
  db: Firestore,
  collection: string,
  ids: readonly string[],
  narrow: (q: Query) => Query = (q) => q,
): Promise<FirebaseFirestore.QueryDocumentSnapshot[]> {
  const chunks = Array.from({ length: Math.ceil(ids.length / IN_LIMIT) }, (_, i) =>
    ids.slice(i * IN_LIMIT, (i + 1) * IN_LIMIT),
  );
  const pages = await Promise.all(
    chunks.map((chunk) => narrow(db.collection(collection).where('processInstanceId', 'in', chunk)).get()),
  );
  return pages.flatMap((p) => p.docs);
}

const withPrefix = (query: Query, field: string, prefix: string): Query =>
  query.where(field, '>=', prefix).where(field, '<', `${prefix}\uf8ff`);

/**
 * Reads this run's state: inbox documents of its work orders (by key) and
 * its poison messages (by id), the process instances, invoices, invoice
 * jobs, escalations, waiting tokens and timers of its work orders. Earlier
 * runs on the same emulators are ignored.
 */
export async function readSnapshot(db: Firestore, prefix: string, poisonIds: readonly string[]): Promise<StoredState> {
  const [inbox, poison, instances, invoices, escalations] = await Promise.all([
    withPrefix(db.collection(INBOX), 'correlationKey', prefix).get(),
    poisonIds.length === 0 ? Promise.resolve([]) : db.getAll(...poisonIds.map((id) => db.collection(INBOX).doc(id))),
    withPrefix(db.collection(COLLECTIONS.instances), 'businessKey', prefix).get(),
    withPrefix(db.collection(INVOICES), 'workOrderId', prefix).get(),
    withPrefix(db.collection(ESCALATIONS), 'workOrderId', prefix).get(),
  ]);
  const instanceIds = instances.docs.map((d) => d.id);
  // Tokens and jobs live in their instance's document (engine/store/instance-doc.ts).
  const timers = await byInstance(db, COLLECTIONS.timers, instanceIds);
  const tokens = instances.docs.flatMap((d) => instanceTokens(d.data()).filter((t) => t.status === 'WAITING_MESSAGE'));
  const invoiceJobs = instances.docs.flatMap((d) =>
    instanceJobs(d.data())
      .filter((j) => j.activityId === 'createInvoice')
      .map(() => ({ processInstanceId: d.id })),
  );
  const view = (id: string, d: Record<string, unknown>): InboxView => ({
    id,
    status: String(d.status),
    reason: typeof d.reason === 'string' ? d.reason : null,
    correlationKey: typeof d.correlationKey === 'string' ? d.correlationKey : null,
    correlatedVia: typeof d.correlatedVia === 'string' ? d.correlatedVia : null,
    deadLettered: d.deadLetter !== undefined && d.deadLetter !== null,
    payloadHash: typeof d.payloadHash === 'string' ? d.payloadHash : null,
    reference: claimOf(d.reference),
    offloaded: claimOf(d.offloaded),
  });
  const instanceList = instances.docs.map((d) => ({
    id: d.id,
    businessKey: String(d.get('businessKey')),
    status: String(d.get('status')),
  }));
  const ours = new Set(instanceList.map((i) => i.id));
  return {
    inbox: [
      ...inbox.docs.map((d) => view(d.id, d.data())),
      ...poison.flatMap((d) => (d.exists ? [view(d.id, d.data() ?? {})] : [])),
    ],
    instances: instanceList,
    invoices: invoices.docs.map((d) => ({
      workOrderId: String(d.get('workOrderId')),
      processInstanceId: String(d.get('processInstanceId')),
      billedItems: countOf(d.get('billedItems')),
      lineItemCount: countOf(d.get('lineItemCount')),
      report: typeof d.get('report') === 'string' ? String(d.get('report')) : null,
    })),
    invoiceJobs: invoiceJobs.filter((j) => ours.has(j.processInstanceId)),
    waitingTokens: tokens.map((t) => ({ processInstanceId: t.processInstanceId, activityId: t.activityId })),
    timers: timers.map((d) => ({
      processInstanceId: String(d.get('processInstanceId')),
      activityId: String(d.get('activityId')),
      status: String(d.get('status')),
    })),
    escalations: escalations.docs.map((d) => ({
      workOrderId: String(d.get('workOrderId')),
      processInstanceId: String(d.get('processInstanceId')),
    })),
  };
}
