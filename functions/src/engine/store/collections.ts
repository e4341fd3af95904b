import type { DocumentReference, Firestore } from '@google-cloud/firestore';
import { sha256Hex } from '../../core/hash';
import { correlationKeyDocId, escalationDocId, eventSubscriptionId, invoiceDocId, isDocumentId } from '../ids';
import type { ExecutionState, InstanceState, JobState, WaitingPoint } from '../state';
import type { UnitOfWork } from './unit-of-work';

/** Collection names: a public contract, see docs/data-model.md. */
export const COLLECTIONS = {
  /** One document per instance, its tokens and jobs included (instance-doc.ts). */
  instances: 'processInstances',
  /** Before this version: one document per token. Read (and folded into the instance) for instances stored then; never written. */
  executions: 'executions',
  /** Before this version: one document per job. Read as `executions`; sweepJobs still queries its PENDING ones. */
  jobs: 'jobs',
  eventSubscriptions: 'eventSubscriptions',
  correlationKeys: 'correlationKeys',
  invoices: 'invoices',
  timers: 'timers',
  escalations: 'escalations',
} as const;

/**
 * Shards of the process-state collections that are scanned (timers,
 * eventSubscriptions): each document carries `shard`, and a sweep or a gauge
 * queries shard by shard, so no query reads everything at once. A constant,
 * not a setting: documents keep their shard forever, so changing it would
 * need a migration (INBOX_SHARDS, which the receiver may change, is another matter).
 */
export const STATE_SHARDS = 16;

/**
 * The shard of a document id: its first eight hex digits mod
 * {@link STATE_SHARDS}. Our ids are hashes already (ids.ts); any other text
 * is hashed first, so every id gets a shard.
 */
export function shardOf(id: string): number {
  const hex = /^[0-9a-f]{8}/.test(id) ? id : sha256Hex(id);
  return Number.parseInt(hex.slice(0, 8), 16) % STATE_SHARDS;
}

/**
 * The eventSubscriptions document id of a waiting point: the token's
 * execution id, or for a branch of an event-based gateway (a token waits
 * for several messages there) {@link eventSubscriptionId}.
 */
export const eventSubscriptionDocId = (point: Pick<WaitingPoint, 'executionId' | 'activityId' | 'gatewayId'>): string =>
  point.gatewayId === undefined ? point.executionId : eventSubscriptionId(point.executionId, point.activityId);

/**
 * The per-correlation-key document. It lists the key's waiting points, so the
 * correlation lookup and the double-token guard are one read by id.
 */
export interface CorrelationKeyDoc {
  readonly correlationKey: string;
  readonly waiting: readonly WaitingPoint[];
  /**
   * The key's lane: OPEN inbox documents, added by the receiver when it stores
   * one, removed by the relay when it finishes one. Gives the relay's per-key
   * order check and the waiting point's buffer lookup as a read by id.
   */
  readonly open: readonly LaneEntry[];
  readonly updatedAt: Date;
}

/** An OPEN inbox document in its key's lane, with what orders it. */
export interface LaneEntry {
  readonly inboxId: string;
  readonly messageName: string;
  /** Sender's order; null when Pub/Sub (or its emulator) left it out. */
  readonly publishTime: Date | null;
  readonly receivedAt: Date;
}

export const refs = {
  instance: (db: Firestore, id: string): DocumentReference => db.collection(COLLECTIONS.instances).doc(id),
  /** An old-layout token document (read only; see COLLECTIONS.executions). */
  execution: (db: Firestore, id: string): DocumentReference => db.collection(COLLECTIONS.executions).doc(id),
  /** An old-layout job document (read only; see COLLECTIONS.jobs). */
  job: (db: Firestore, id: string): DocumentReference => db.collection(COLLECTIONS.jobs).doc(id),
  /** One document per waiting point: by execution, or by {@link eventSubscriptionDocId} for a gateway branch (`eventSubscriptionOf`). */
  eventSubscription: (db: Firestore, executionId: string): DocumentReference => db.collection(COLLECTIONS.eventSubscriptions).doc(executionId),
  eventSubscriptionOf: (db: Firestore, point: Pick<WaitingPoint, 'executionId' | 'activityId' | 'gatewayId'>): DocumentReference =>
    db.collection(COLLECTIONS.eventSubscriptions).doc(eventSubscriptionDocId(point)),
  timer: (db: Firestore, id: string): DocumentReference => db.collection(COLLECTIONS.timers).doc(id),
  correlationKey: (db: Firestore, correlationKey: string): DocumentReference => db.collection(COLLECTIONS.correlationKeys).doc(correlationKeyDocId(correlationKey)),
  invoice: (db: Firestore, workOrderId: string): DocumentReference => db.collection(COLLECTIONS.invoices).doc(invoiceDocId(workOrderId)),
  /** The record of one escalation of an overdue work order (one per escalation job). */
  escalation: (db: Firestore, jobIdValue: string): DocumentReference => db.collection(COLLECTIONS.escalations).doc(escalationDocId(jobIdValue)),
  /** Where an invoice was written before invoice ids were hashed (`invoices/{workOrderId}`); null when the key could not have been an id. */
  legacyInvoice: (db: Firestore, workOrderId: string): DocumentReference | null => (isDocumentId(workOrderId) ? db.collection(COLLECTIONS.invoices).doc(workOrderId) : null),
};

/** Stored documents are written by this code only; reading them back is a typed view. */
/** The store's own fields of an instance document (instance-doc.ts): not part of the engine's InstanceState. */
const INSTANCE_DOC_FIELDS: ReadonlySet<string> = new Set(['tokens', 'jobs', 'shard', 'jobsPendingSince', 'failedJobs']);
/** The InstanceState of an instance document, without the store's fields (tokens, jobs, …), so a transition never carries them. */
export const asInstance = (data: Record<string, unknown>): InstanceState =>
  Object.fromEntries(Object.entries(data).filter(([k]) => !INSTANCE_DOC_FIELDS.has(k))) as unknown as InstanceState;
export const asExecution = (data: Record<string, unknown>): ExecutionState => data as unknown as ExecutionState;
export const asJob = (data: Record<string, unknown>): JobState => data as unknown as JobState;
/** The key document with absent lists as empty ones (older documents, or one written by only one side). */
export const asCorrelationKey = (data: Record<string, unknown> | undefined, correlationKey: string): CorrelationKeyDoc => {
  const doc = (data ?? {}) as Partial<CorrelationKeyDoc>;
  return { correlationKey, waiting: doc.waiting ?? [], open: doc.open ?? [], updatedAt: doc.updatedAt ?? new Date(0) };
};

/** Writes the key document through a unit of work, or deletes it once both lists are empty. */
export function saveCorrelationKey(uow: UnitOfWork, doc: CorrelationKeyDoc, now: Date): void {
  const ref = refs.correlationKey(uow.db, doc.correlationKey);
  if (doc.waiting.length === 0 && doc.open.length === 0) uow.delete(ref);
  else uow.set(ref, { correlationKey: doc.correlationKey, waiting: doc.waiting, open: doc.open, updatedAt: now });
}
export const plain = <T extends object>(value: T): Record<string, unknown> => ({ ...value }) as Record<string, unknown>;
