import { type OffloadedPayload, type ReferenceClaim, summarize } from './claim-check';
import type { InvalidDraft, PushEnvelope, ValidDraft } from './draft';
import { collisionDocId, shardOf } from './ids';

/** Name of the inbox collection (docs/data-model.md describes every field). */
export const INBOX = 'inbox';
/** Subcollection holding the raw bytes of a message too large to keep inline. */
export const RAW_CHUNKS = 'rawChunks';

/**
 * Life of an inbox document: OPEN until the relay correlates it (DONE) or
 * gives up on it for a business reason (PARKED). An operator can requeue a
 * PARKED document (back to OPEN). See docs/inbox-states.md.
 */
export type InboxStatus = 'OPEN' | 'DONE' | 'PARKED';

/** Why a document is PARKED. The receiver sets the first two. */
export type ParkReason =
  | 'INVALID_PAYLOAD'
  | 'KEY_COLLISION'
  | 'NO_WAITING_INSTANCE'
  | 'AMBIGUOUS_CORRELATION'
  /** A start message (its name has a message start event) whose instance, (process, correlation key), exists already. */
  | 'ALREADY_STARTED'
  /** A start message whose variables fail startProcess's door checks (process/variables.ts): no instance could run with them. */
  | 'START_REFUSED'
  | 'DEAD_LETTERED'
  | 'MANUAL'
  /**
   * The sender's claim-check reference (`reference`) names an object that is
   * missing, or whose generation was replaced: the sender must upload it
   * again and send a new message (or an operator restores the object and
   * requeues). Set by the relay before correlating; lastError says which.
   */
  | 'REFERENCE_UNAVAILABLE'
  /** A token waits for it, but the instance holds its most live tokens (MAX_LIVE_TOKENS): requeue once they have ended. */
  | 'TOKEN_LIMIT'
  /** The engine could not apply it (its step threw, or needs more than one transaction), after a few attempts: lastError says why. */
  | 'STEP_FAILED';

/** Where the message came from, as Pub/Sub described it. */
export interface InboxSource {
  readonly subscription: string | null;
  readonly messageId: string;
  /** Null when the sender (the emulator, for one) left it out. */
  readonly publishTime: Date | null;
  readonly orderingKey: string | null;
  readonly deliveryAttempt: number | null;
  /**
   * Attributes as a list of pairs, sorted by key. Not a map: Firestore reserves
   * field names like `__x__` and rejects empty ones, and attribute keys are
   * the sender's choice.
   */
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: string }>;
}

/** The stored form of an inbox document (what the receiver writes). */
export interface InboxDocument {
  readonly status: InboxStatus;
  readonly reason: ParkReason | null;
  readonly messageName: string | null;
  readonly correlationKey: string | null;
  readonly dedupKey: string | null;
  /** The schema output; for an offloaded payload its summary (claim-check.ts, summarize). */
  readonly payload: Readonly<Record<string, unknown>> | null;
  /** SHA-256 of the canonical JSON of the whole payload (also when offloaded: of the object's bytes). */
  readonly payloadHash: string;
  /** The sender's claim-check reference, checked for form and bucket, never fetched by the receiver. Absent on documents from before claim checks: read as null. */
  readonly reference: ReferenceClaim | null;
  /** Where the receiver put a payload over INBOX_OFFLOAD_BYTES (the inbox's bucket); the document then keeps its summary. Absent before claim checks: null. */
  readonly offloaded: OffloadedPayload | null;
  /** Raw bytes, inline when small; otherwise null and split over `rawChunks`. Set for invalid messages only. */
  readonly rawData: Buffer | null;
  readonly rawDataForm: InvalidDraft['rawDataForm'] | null;
  readonly rawDataBytes: number;
  readonly rawDataChunks: number;
  readonly validationError: string | null;
  /** For KEY_COLLISION: the id of the document that holds the first payload. */
  readonly collidesWith: string | null;
  readonly attempts: number;
  /** When the relay may next look at it; null while PARKED. */
  readonly nextAttemptAt: Date | null;
  readonly receivedAt: Date;
  readonly parkedAt: Date | null;
  readonly lastError: string | null;
  /** See shardOf(). */
  readonly shard: number;
  readonly source: InboxSource;
  /**
   * W3C traceparent of the receipt's span (trace/trace.ts): the relay's span
   * for this document continues that trace, also when a scheduled call finds
   * it. Absent when the receiver had none (before tracing, or a document not written by the receiver).
   */
  readonly traceparent?: string;
}

/** Raw data up to this size stays on the document; Firestore caps a document at 1 MiB. */
export const INLINE_RAW_BYTES = 256 * 1024;
/** Chunk size for larger raw data; below Firestore's 1 MiB field limit. */
export const RAW_CHUNK_BYTES = 768 * 1024;

export function sourceOf(envelope: PushEnvelope): InboxSource {
  const attributes = Object.keys(envelope.attributes)
    .sort()
    .map((key) => ({ key, value: envelope.attributes[key] ?? '' }));
  return {
    subscription: envelope.subscription,
    messageId: envelope.messageId,
    publishTime: envelope.publishTime,
    orderingKey: envelope.orderingKey,
    deliveryAttempt: envelope.deliveryAttempt,
    attributes,
  };
}

interface Context {
  readonly envelope: PushEnvelope;
  readonly now: Date;
  readonly shards: number;
  readonly traceparent?: string | null;
}

const EMPTY_RAW = { rawData: null, rawDataForm: null, rawDataBytes: 0, rawDataChunks: 0 } as const;

/**
 * A readable message: OPEN and due at once. With `offloaded` (the receiver
 * wrote the payload to the inbox's bucket first) it keeps the payload's
 * summary and the reference instead of the payload.
 */
export function openDocument(
  draft: ValidDraft,
  ctx: Context,
  offloaded: OffloadedPayload | null = null,
): InboxDocument {
  return {
    status: 'OPEN',
    reason: null,
    messageName: draft.messageName,
    correlationKey: draft.correlationKey,
    dedupKey: draft.dedupKey,
    payload: offloaded === null ? draft.payload : summarize(draft.payload),
    payloadHash: draft.payloadHash,
    reference: draft.reference,
    offloaded,
    ...EMPTY_RAW,
    validationError: null,
    collidesWith: null,
    attempts: 0,
    nextAttemptAt: ctx.now,
    receivedAt: ctx.now,
    parkedAt: null,
    lastError: null,
    shard: shardOf(draft.id, ctx.shards),
    source: sourceOf(ctx.envelope),
    // Only when there is one: documents (and the tests that compare them) stay as they were without tracing.
    ...(typeof ctx.traceparent === 'string' ? { traceparent: ctx.traceparent } : {}),
  };
}

/** A second, different payload under an existing dedup key: kept, PARKED, pointing at the first. */
export function collisionDocument(
  draft: ValidDraft,
  firstId: string,
  ctx: Context,
  offloaded: OffloadedPayload | null = null,
): { id: string; doc: InboxDocument } {
  const id = collisionDocId(firstId, draft.payloadHash);
  const open = openDocument(draft, ctx, offloaded);
  return {
    id,
    doc: {
      ...open,
      status: 'PARKED',
      reason: 'KEY_COLLISION',
      collidesWith: firstId,
      nextAttemptAt: null,
      parkedAt: ctx.now,
      shard: shardOf(id, ctx.shards),
    },
  };
}

/** An unreadable message: PARKED with its raw bytes and the validation error. */
export function invalidDocument(draft: InvalidDraft, ctx: Context): InboxDocument {
  const inline = draft.rawData.length <= INLINE_RAW_BYTES;
  return {
    status: 'PARKED',
    reason: 'INVALID_PAYLOAD',
    messageName: draft.messageName,
    correlationKey: null,
    dedupKey: null,
    payload: null,
    payloadHash: draft.payloadHash,
    reference: null,
    offloaded: null,
    rawData: inline ? draft.rawData : null,
    rawDataForm: draft.rawDataForm,
    rawDataBytes: draft.rawData.length,
    rawDataChunks: inline ? 0 : Math.ceil(draft.rawData.length / RAW_CHUNK_BYTES),
    validationError: draft.error,
    collidesWith: null,
    attempts: 0,
    nextAttemptAt: null,
    receivedAt: ctx.now,
    parkedAt: ctx.now,
    lastError: null,
    shard: shardOf(draft.id, ctx.shards),
    source: sourceOf(ctx.envelope),
  };
}

/** Splits raw data into the chunks stored under `rawChunks/{index}`. */
export function rawChunks(rawData: Buffer): Buffer[] {
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < rawData.length; offset += RAW_CHUNK_BYTES) {
    chunks.push(rawData.subarray(offset, offset + RAW_CHUNK_BYTES));
  }
  return chunks;
}
