/**
 * What the inbox stores a message from: the push envelope as the receiver
 * read it and the draft interpretMessage made of it. These shapes live here,
 * not in receiver/, because the inbox and the dead-letter store consume them
 * while receiver/ produces them: receiver/ imports inbox/, never the reverse
 * (ARCHITECTURE.md, checked by `npm run lint`).
 */

/** A push envelope, normalised: one spelling per field, absent fields as null. */
export interface PushEnvelope {
  readonly messageId: string;
  /** Full subscription name, e.g. `projects/p/subscriptions/s`; null if the sender left it out. */
  readonly subscription: string | null;
  /** The base64 text exactly as received; may be invalid base64 (decoded later). Empty if absent. */
  readonly data: string;
  /** Attributes in a null-prototype object, so keys such as `__proto__` are plain data. */
  readonly attributes: Readonly<Record<string, string>>;
  readonly publishTime: Date | null;
  readonly orderingKey: string | null;
  readonly deliveryAttempt: number | null;
}

import type { ReferenceClaim } from './claim-check';

/** A message the relay can work on. */
export interface ValidDraft {
  readonly kind: 'valid';
  readonly id: string;
  /** The id the same message had before the correlation key was part of it (ids.ts, legacyMessageDocId). */
  readonly legacyId: string;
  readonly messageName: string;
  readonly correlationKey: string;
  readonly dedupKey: string;
  /** Schema output: known fields only, bounded sizes. */
  readonly payload: Readonly<Record<string, unknown>>;
  /** SHA-256 of the canonical JSON of `payload`: equal events hash equally. */
  readonly payloadHash: string;
  /** canonicalJson(payload): hashed, measured against INBOX_OFFLOAD_BYTES, and the object's bytes when offloaded. */
  readonly canonicalPayload: string;
  /** The sender's claim-check reference, if the type declares one and the message carries it (form and bucket checked). */
  readonly reference: ReferenceClaim | null;
  /** Variable an offloaded payload's reference goes to: the type's claimCheck.variable, else DEFAULT_OFFLOAD_VARIABLE. */
  readonly offloadVariable: string;
}

/** A message nobody can work on: kept with its raw bytes and the reason. */
export interface InvalidDraft {
  readonly kind: 'invalid';
  readonly id: string;
  /** The name it claimed, if any. */
  readonly messageName: string | null;
  readonly error: string;
  /** Decoded bytes, or the received text when it was not valid base64. */
  readonly rawData: Buffer;
  readonly rawDataForm: 'DECODED' | 'UNDECODABLE_BASE64';
  /** SHA-256 of rawData. */
  readonly payloadHash: string;
}

/** What interpretMessage makes of any envelope: a message to relay, or one to keep parked with its reason. */
export type InboxDraft = ValidDraft | InvalidDraft;
