/**
 * The inbox documents as the operator sees them: the paged list of
 * `inbox list` and the console's list, and one document with everything
 * `inbox show` and `inbox explain` say about it.
 */
import type { DocumentSnapshot, Firestore, Query } from '@google-cloud/firestore';
import { datesIn } from '../engine/store/converters';
import { INBOX } from '../inbox/document';
import { offloadedObject } from '../inbox/claim-check';
import { type ListFilters, QUERIES } from '../queries';
import { readObject, shownPayload, stateText, statObject } from './claims';
import { explain } from './explain';
import { explainFacts } from './explain-facts';
import { rawDataView } from './raw-data';
import { isoOrNull, stringOrNull } from './stored-values';
import type {
  DocumentFilters,
  DocumentPage,
  DocumentRow,
  DocumentView,
  OperationsDeps,
  RepairRecordView,
} from './types';

/** A document as read outside a transaction: Timestamps as Dates, with its id. */
export type Doc = Record<string, unknown> & { id: string };

export const view = (snap: DocumentSnapshot): Doc => ({ ...datesIn(snap.data() ?? {}), id: snap.id });

/** Documents read per query while the age filter filters on the client. */
export const LIST_PAGE_SIZE = 500;

/**
 * The fields {@link rowOf} reads: the field mask of every read that only
 * makes rows (the console's list, an instance's audit trail and parked
 * documents), so a page of documents does not carry their payloads (up to
 * INBOX_OFFLOAD_BYTES each when inline).
 */
export const ROW_FIELDS = [
  'status',
  'reason',
  'messageName',
  'correlationKey',
  'attempts',
  'receivedAt',
  'lastError',
  'validationError',
] as const;

/** One line of a list, from a document as {@link view} makes it (reads only {@link ROW_FIELDS}). */
export function rowOf(d: Doc): DocumentRow {
  return {
    id: d.id,
    status: String(d.status),
    reason: stringOrNull(d.reason),
    messageName: stringOrNull(d.messageName),
    correlationKey: stringOrNull(d.correlationKey),
    attempts: typeof d.attempts === 'number' ? d.attempts : 0,
    receivedAt: isoOrNull(d.receivedAt),
    error: stringOrNull(d.lastError) ?? stringOrNull(d.validationError),
  };
}

/**
 * A stored value as plain JSON: Timestamps and Dates as ISO strings, bytes
 * as base64, references as their path; what JSON cannot hold (a function, a
 * symbol) as null. The console sends it as is.
 */
export function jsonSafe(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(jsonSafe);
  if (typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.toDate === 'function') return jsonSafe((o.toDate as () => unknown).call(value));
    if (typeof o.path === 'string' && 'firestore' in o) return o.path;
    return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, jsonSafe(v)]));
  }
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  return typeof value === 'string' || typeof value === 'boolean' ? value : null;
}

/** The repair records a document or instance keeps (`repairs`); by/via null on records stored before they were recorded. */
export function repairsOf(stored: Readonly<Record<string, unknown>>): RepairRecordView[] {
  const repairs = Array.isArray(stored.repairs) ? (stored.repairs as unknown[]) : [];
  return repairs.flatMap((r): RepairRecordView[] => {
    if (typeof r !== 'object' || r === null) return [];
    const x = r as Record<string, unknown>;
    const via = x.via === 'cli' || x.via === 'console' ? x.via : null;
    const details = jsonSafe(x.details);
    return [
      {
        requestId: String(x.requestId),
        kind: String(x.kind),
        at: jsonSafe(x.at) as string | null,
        by: stringOrNull(x.by),
        via,
        details:
          typeof details === 'object' && details !== null && !Array.isArray(details)
            ? (details as Record<string, unknown>)
            : {},
      },
    ];
  });
}

/** The equality filters of a query (the age filter is not one: see {@link scanDocuments}). */
function equalityOf(filters: DocumentFilters): ListFilters {
  return {
    ...(filters.status === undefined ? {} : { status: filters.status }),
    ...(filters.reason === undefined ? {} : { reason: filters.reason }),
    ...(filters.messageName === undefined ? {} : { messageName: filters.messageName }),
    ...(filters.correlationKey === undefined ? {} : { correlationKey: filters.correlationKey }),
  };
}

/**
 * The first `limit` documents after the id `after` that match the filters
 * and `keep`, in id order. Without `keep` that is one query. With it (the
 * age filter), pages through the matches in id order until `limit` pass or
 * none are left, so an old document is never missed behind newer ones:
 * receivedAt has no single-field index (growing timestamps are exempted, see
 * firestore.indexes.json), so the age cannot go into the query without a
 * composite index per filter combination.
 */
export async function scanDocuments(
  db: Firestore,
  filters: ListFilters,
  after: string | null,
  limit: number,
  keep: ((doc: Doc) => boolean) | null,
  options: { readonly pageSize?: number; readonly fields?: readonly string[] } = {},
): Promise<{ docs: Doc[]; scanned: number; exhausted: boolean }> {
  const { pageSize = LIST_PAGE_SIZE, fields } = options;
  // A field mask when the caller needs only some fields; `keep` must read no other.
  const listQuery = (cursor: string | null, size: number): Query => {
    const q = QUERIES.inboxList.build(db, filters, cursor, size);
    return fields === undefined ? q : q.select(...fields);
  };
  if (keep === null) {
    const docs = (await listQuery(after, limit).get()).docs.map(view);
    return { docs, scanned: docs.length, exhausted: docs.length < limit };
  }
  const found: Doc[] = [];
  let cursor = after;
  let scanned = 0;
  while (found.length < limit) {
    const page = await listQuery(cursor, pageSize).get();
    scanned += page.size;
    found.push(...page.docs.map(view).filter(keep));
    if (page.size < pageSize) return { docs: found.slice(0, limit), scanned, exhausted: found.length <= limit };
    cursor = page.docs[page.docs.length - 1]?.id ?? null;
  }
  return { docs: found.slice(0, limit), scanned, exhausted: false };
}

/**
 * One page of documents in id order after the cursor `after` (the last id
 * of the page before). One more than `limit` is asked for, so the last page
 * says it is the last (`next` null) without counting anything; with 10,000
 * PARKED that is one indexed query of limit + 1 documents per page.
 */
export async function listDocuments(
  deps: OperationsDeps,
  filters: DocumentFilters,
  page: { readonly limit: number; readonly after: string | null },
): Promise<DocumentPage> {
  const olderThan = filters.olderThanMs ?? null;
  const now = deps.now().getTime();
  const old = (d: Doc): boolean =>
    olderThan !== null && d.receivedAt instanceof Date && now - d.receivedAt.getTime() >= olderThan;
  // The age filter reads receivedAt, one of the row's fields.
  const { docs } = await scanDocuments(
    deps.db(),
    equalityOf(filters),
    page.after,
    page.limit + 1,
    olderThan === null ? null : old,
    { fields: ROW_FIELDS },
  );
  const shown = docs.slice(0, page.limit);
  return { documents: shown.map(rowOf), next: docs.length > page.limit ? (shown[shown.length - 1]?.id ?? null) : null };
}

/**
 * One document with its payload (inline; offloaded: read pinned and shown,
 * a large one as a preview; a sender's reference: stat'ed, never fetched),
 * the raw data the receiver kept (its first bytes as text), dead-letter
 * record, repairs and the explanation of `inbox explain`.
 * Null when there is no such document.
 */
export async function readDocument(deps: OperationsDeps, id: string): Promise<DocumentView | null> {
  const db = deps.db();
  const snap = await db.collection(INBOX).doc(id).get();
  if (!snap.exists) return null;
  const stored = snap.data() ?? {};
  const doc = view(snap);
  const offloadedRef = offloadedObject(stored.offloaded);
  const referenceRef = offloadedObject(stored.reference);
  const [offloaded, reference, raw, facts] = await Promise.all([
    offloadedRef === null ? null : readObject(deps.payloadStore, offloadedRef),
    referenceRef === null ? null : statObject(deps.payloadStore, referenceRef),
    rawDataView(db, id, stored),
    explainFacts(db, id, deps.config.relay.policy.bufferWindowMs, deps.engine),
  ]);
  const uriOf = (claim: unknown): string => String((claim as Record<string, unknown>).uri);
  const inline =
    offloaded?.data === null || offloaded === null ? jsonSafe(stored.payload) : shownPayload(offloaded.data);
  // Deleted between the two reads (a purge): the explanation says so rather than failing the page.
  const explanation =
    facts === null
      ? { summary: 'the document was deleted while it was read', because: [], next: [] }
      : explain(facts, deps.now());
  const deadLetter = jsonSafe(stored.deadLetter);
  return {
    id,
    row: rowOf(doc),
    stored: jsonSafe(stored) as Record<string, unknown>,
    payload: {
      inline,
      offloaded: offloaded === null ? null : { uri: uriOf(stored.offloaded), state: stateText(offloaded.state) },
      reference: reference === null ? null : { uri: uriOf(stored.reference), state: stateText(reference) },
    },
    raw,
    deadLetter: typeof deadLetter === 'object' && deadLetter !== null ? (deadLetter as Record<string, unknown>) : null,
    processInstanceId: stringOrNull(stored.processInstanceId),
    explanation: { summary: explanation.summary, because: explanation.because, next: explanation.next },
    repairs: repairsOf(stored),
  };
}
