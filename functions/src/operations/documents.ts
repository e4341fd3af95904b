// placeholder until the operations helpers' branches merge
import { FieldPath, type DocumentSnapshot } from '@google-cloud/firestore';
import { INBOX } from '../inbox/document';
import type { DocumentFilters, DocumentPage, DocumentRow, DocumentView, OperationsDeps, RepairRecordView } from './types';

function rowOf(snap: DocumentSnapshot): DocumentRow {
  const d = snap.data() ?? {};
  const text = (v: unknown): string | null => (typeof v === 'string' ? v : null);
  return { id: snap.id, status: String(d.status), reason: text(d.reason), messageName: text(d.messageName), correlationKey: text(d.correlationKey), attempts: typeof d.attempts === 'number' ? d.attempts : 0, receivedAt: null, error: text(d.lastError) ?? text(d.validationError) };
}

export async function listDocuments(deps: OperationsDeps, filters: DocumentFilters, page: { limit: number; after: string | null }): Promise<DocumentPage> {
  let q = deps.db().collection(INBOX).orderBy(FieldPath.documentId());
  if (filters.status !== undefined) q = q.where('status', '==', filters.status);
  if (page.after !== null) q = q.startAfter(page.after);
  const snaps = await q.limit(page.limit).get();
  const documents = snaps.docs.map(rowOf);
  return { documents, next: documents.length === page.limit ? (documents.at(-1)?.id ?? null) : null };
}

export async function readDocument(deps: OperationsDeps, id: string): Promise<DocumentView | null> {
  const snap = await deps.db().collection(INBOX).doc(id).get();
  if (!snap.exists) return null;
  const repairs = ((snap.get('repairs') as Array<Record<string, unknown>> | undefined) ?? []).map((r): RepairRecordView => ({
    requestId: String(r.requestId),
    kind: String(r.kind),
    at: null,
    by: typeof r.by === 'string' ? r.by : null,
    via: r.via === 'cli' || r.via === 'console' ? r.via : null,
    details: {},
  }));
  return { id, row: rowOf(snap), stored: {}, payload: { inline: null, offloaded: null, reference: null }, deadLetter: null, processInstanceId: null, explanation: { summary: '', because: [], next: [] }, repairs };
}
