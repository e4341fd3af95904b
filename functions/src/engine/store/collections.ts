import type { DocumentReference, Firestore, Timestamp } from '@google-cloud/firestore';
import { sha256Hex } from '../../core/hash';
import { correlationKeyDocId } from '../ids';
import type { ExecutionState, InstanceState, JobState, WaitingPoint } from '../state';
import type { UnitOfWork } from './unit-of-work';

/** Collection names: a public contract, see docs/data-model.md. */
export const COLLECTIONS = {
  /** One document per instance, its tokens and jobs included (instance-doc.ts). */
  instances: 'processInstances',
  /** Before 0.6.0: one document per token. Read (and folded into the instance) for instances stored then; never written. */
  executions: 'executions',
  /** Before 0.6.0: one document per job. Read as `executions`; sweepJobs still queries its PENDING ones. */
  jobs: 'jobs',
  correlationKeys: 'correlationKeys',
  timers: 'timers',
  /** One document per user task, OPEN until completed or cancelled (user-tasks.ts). */
  userTasks: 'userTasks',
  /** The counts of a multi-instance activity's items that ended, `{batch}-{shard}` (items.ts); deleted when the activity ends. */
  itemBatches: 'itemBatches',
  /** Every version of a model that ran here, its XML kept while anything of it may run (versions.ts). */
  processVersions: 'processVersions',
} as const;

/**
 * Shards of the process-state collections that are scanned (timers,
 * correlationKeys): each document carries `shard`, and a sweep or a gauge
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
 * The per-correlation-key document. It lists the key's waiting points, so the
 * correlation lookup and the double-token guard are one read by id; it is
 * also the only place a waiting point is stored (no eventSubscriptions
 * document since 0.6.0), so the waiting gauges and `inbox waiting`
 * query key documents through the fields {@link keyIndexFields} derives.
 */
export interface CorrelationKeyDoc {
  readonly correlationKey: string;
  /** Every waiting point of the key; several of one token for the branches of an event-based gateway. */
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
  timer: (db: Firestore, id: string): DocumentReference => db.collection(COLLECTIONS.timers).doc(id),
  userTask: (db: Firestore, id: string): DocumentReference => db.collection(COLLECTIONS.userTasks).doc(id),
  correlationKey: (db: Firestore, correlationKey: string): DocumentReference =>
    db.collection(COLLECTIONS.correlationKeys).doc(correlationKeyDocId(correlationKey)),
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
export const asCorrelationKey = (
  data: Record<string, unknown> | undefined,
  correlationKey: string,
): CorrelationKeyDoc => {
  const doc = (data ?? {}) as Partial<CorrelationKeyDoc>;
  return { correlationKey, waiting: doc.waiting ?? [], open: doc.open ?? [], updatedAt: doc.updatedAt ?? new Date(0) };
};

/**
 * What the waiting queries of a key document read, derived from its waiting
 * points: `shard` (of the document id, as timers carry theirs), `waitingFor`
 * (the distinct message names, sorted: `array-contains` finds the keys that
 * wait for a message) and `waitingSince` (the oldest point's createdAt, the
 * order of the gauges and of `inbox waiting`; null without points, written
 * as an absent field so ordered queries skip the key).
 */
export interface KeyIndexFields {
  readonly shard: number;
  readonly waitingFor: readonly string[];
  readonly waitingSince: Date | null;
}

/** A stored createdAt as ms: a Date from the unit of work, a Timestamp from a plain read; NaN for anything else (edited by hand). */
// Duck-typed: this module is loaded at start-up, the Firestore client only with the first request (test/e2e/lazy-start.test.ts).
const isTimestamp = (value: unknown): value is Timestamp =>
  typeof value === 'object' && value !== null && typeof (value as { toMillis?: unknown }).toMillis === 'function';
const millisOf = (value: unknown): number =>
  value instanceof Date ? value.getTime() : isTimestamp(value) ? value.toMillis() : Number.NaN;

/** {@link KeyIndexFields} of the key document `docId` holding these points (points whose createdAt is no time are left out of `waitingSince`). */
export function keyIndexFields(docId: string, all: readonly WaitingPoint[]): KeyIndexFields {
  // Standby points (message boundary events, event subprocess triggers) wait beside a token's own wait: not watched.
  const waiting = all.filter((w) => w.standby !== true);
  const times = waiting.map((w) => millisOf(w.createdAt)).filter((t) => Number.isFinite(t));
  return {
    shard: shardOf(docId),
    waitingFor: [...new Set(waiting.map((w) => w.messageName))].sort(),
    waitingSince: times.length === 0 ? null : new Date(Math.min(...times)),
  };
}

/** Writes the key document through a unit of work (with its {@link KeyIndexFields}), or deletes it once both lists are empty. */
export function saveCorrelationKey(uow: UnitOfWork, doc: CorrelationKeyDoc, now: Date): void {
  const ref = refs.correlationKey(uow.db, doc.correlationKey);
  if (doc.waiting.length === 0 && doc.open.length === 0) {
    uow.delete(ref);
    return;
  }
  const { shard, waitingFor, waitingSince } = keyIndexFields(ref.id, doc.waiting);
  uow.set(ref, {
    correlationKey: doc.correlationKey,
    waiting: doc.waiting,
    open: doc.open,
    updatedAt: now,
    shard,
    waitingFor,
    ...(waitingSince === null ? {} : { waitingSince }),
  });
}
export const plain = <T extends object>(value: T): Record<string, unknown> => ({ ...value }) as Record<string, unknown>;
