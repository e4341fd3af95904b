import type { GsObject } from '../core/gs-uri';

/**
 * Claim checks: a message whose business data is not in the message. Two
 * routes, both stored on the inbox document and both handed to the process
 * as one variable holding a `gs://bucket/object#generation` reference:
 *
 * - by reference (sender side): the sender uploaded the data to its bucket
 *   and the message carries the reference; the receiver checks its form and
 *   the bucket's allow-list and never fetches it before the ack.
 * - offloaded (inbox side): a valid payload larger than INBOX_OFFLOAD_BYTES is
 *   written by the receiver to the inbox's own bucket before its document is
 *   created; the document keeps a summary of the payload and the reference.
 *
 * Pure: shapes and decisions, no I/O (the store is storage/payload-store.ts).
 */

/** A sender's reference, as stored on the inbox document (`reference`). */
export interface ReferenceClaim extends GsObject {
  /** gsUri() of it: what the process variable holds. */
  readonly uri: string;
  /** Where the message carried it. */
  readonly carriedIn: 'field' | 'attribute';
  /** The payload field or attribute name. */
  readonly name: string;
  /** The process variable that receives `uri` (the type's claimCheck.variable). */
  readonly variable: string;
}

/** A payload the receiver moved to the inbox's bucket (`offloaded` on the document). */
export interface OffloadedPayload extends GsObject {
  readonly uri: string;
  /** Bytes of the object: the canonical JSON of the payload, whose SHA-256 is the document's payloadHash. */
  readonly bytes: number;
  /** The process variable that receives `uri`. */
  readonly variable: string;
}

/** Process variable of an offloaded payload whose type declares no claim check. */
export const DEFAULT_OFFLOAD_VARIABLE = 'offloadedPayload';

/** Largest JSON, in bytes, of a top-level field the summary of an offloaded payload keeps. */
export const MAX_SUMMARY_FIELD_BYTES = 1_024;

/**
 * Object name of an offloaded payload: from the inbox id and the payload's
 * hash, so a redelivery names the same object (created only if absent) and a
 * KEY_COLLISION's other payload another one.
 */
export function offloadObjectName(inboxId: string, payloadHash: string): string {
  return `payloads/${inboxId}/${payloadHash}.json`;
}

/** Prefix of every offloaded payload in the inbox's bucket. */
export const OFFLOAD_PREFIX = 'payloads/';

/**
 * What the document keeps of an offloaded payload: the top-level fields that
 * are scalars, or whose JSON is at most MAX_SUMMARY_FIELD_BYTES (the
 * correlation and dedup keys, counts, timestamps). The process gets these as
 * variables, and the whole payload by its reference.
 */
export function summarize(payload: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  const summary: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(payload)) {
    if (value === undefined) continue;
    const scalar = value === null || typeof value !== 'object';
    if (scalar || Buffer.byteLength(JSON.stringify(value), 'utf8') <= MAX_SUMMARY_FIELD_BYTES) summary[key] = value;
  }
  return summary;
}

/** The fields of an inbox document the process variables come from. Absent claim fields (documents from before claim checks) count as null. */
export interface ClaimSource {
  readonly payload: Readonly<Record<string, unknown>> | null;
  readonly reference?: ReferenceClaim | null;
  readonly offloaded?: OffloadedPayload | null;
}

/** The variables a message hands to its process: the payload (or its summary) plus each claim's reference under its variable. */
export function messageVariables(doc: ClaimSource): Readonly<Record<string, unknown>> {
  const variables: Record<string, unknown> = { ...(doc.payload ?? {}) };
  if (doc.reference !== undefined && doc.reference !== null) variables[doc.reference.variable] = doc.reference.uri;
  if (doc.offloaded !== undefined && doc.offloaded !== null) variables[doc.offloaded.variable] = doc.offloaded.uri;
  return variables;
}

/**
 * The retention fields of a document that becomes DONE at `now`. A document
 * with an offloaded payload, or with raw bytes in `rawChunks` (an unreadable
 * message dismissed, a dead letter kept in chunks), gets `payloadExpireAt`,
 * never `expireAt`: the TTL policy on `inbox.expireAt` deletes a document
 * alone, leaving its object or its subcollection behind, so the payload
 * sweep deletes those first and the document after them.
 */
export function doneRetention(
  doc: Pick<ClaimSource, 'offloaded'> & { readonly rawDataChunks?: unknown },
  now: Date,
  retentionMs: number,
): { readonly expireAt: Date } | { readonly payloadExpireAt: Date } {
  const at = new Date(now.getTime() + retentionMs);
  const offloaded = doc.offloaded !== undefined && doc.offloaded !== null;
  return offloaded || Number(doc.rawDataChunks ?? 0) > 0 ? { payloadExpireAt: at } : { expireAt: at };
}

/** The object a stored claim (`offloaded`, `reference`) names, or null when the field is absent or not a claim this code wrote. */
export function offloadedObject(value: unknown): GsObject | null {
  if (typeof value !== 'object' || value === null) return null;
  const { bucket, object, generation } = value as Readonly<Record<string, unknown>>;
  return typeof bucket === 'string' && typeof object === 'string' && typeof generation === 'string'
    ? { bucket, object, generation }
    : null;
}

/**
 * The fields a document kept in rawChunks takes once its payload is
 * offloaded (`inbox requeue`, `inbox repair admit-collision` of a dead letter
 * stored while the bucket was unreachable): the reference, and no chunks
 * (deleted after that commit). Nothing to change without one.
 */
export function adoptedFields(offloaded: OffloadedPayload | null): Readonly<Record<string, unknown>> {
  return offloaded === null ? {} : { offloaded, rawData: null, rawDataForm: null, rawDataBytes: 0, rawDataChunks: 0 };
}

/**
 * Whether a document's bytes are in `rawChunks` with no `offloaded` reference
 * beside them: an unreadable message, or a readable one a dead letter kept in
 * chunks because the payload bucket could not be written (a requeue offloads
 * those). Fields as stored; absent counts as none.
 */
export function inChunksWithoutOffload(doc: {
  readonly rawDataChunks?: unknown;
  readonly offloaded?: unknown;
}): boolean {
  return Number(doc.rawDataChunks ?? 0) > 0 && (doc.offloaded === undefined || doc.offloaded === null);
}
