import type { DocumentReference, Firestore } from '@google-cloud/firestore';

/**
 * Records of processed messages: what the inbox remembers of a message after
 * its DONE document (and with it the payload) expired. A DONE document lives
 * `INBOX_DONE_RETENTION_DAYS` (7); Pub/Sub can bring a message back for up to
 * 31 days (a subscription's retention, a seek to a time or a snapshot), and a
 * replay that finds neither document nor record would be stored as new and
 * correlated again. Written in the transaction that makes the document DONE,
 * under the same id; the receiver's create() asserts in its own commit that
 * no record exists (store-message.ts). See docs/data-model.md.
 */
export const PROCESSED = 'processedMessages';

/**
 * How a message was processed: RELAY (correlated to a waiting token), BUFFER
 * (taken by a token that reached its waiting point), START (it started its
 * instance: a message start event), DISMISSED (an operator closed it,
 * `inbox repair dismiss`).
 */
export type CorrelatedVia = 'RELAY' | 'BUFFER' | 'START' | 'DISMISSED';

/** One processed message, small: no payload, no attributes. */
export interface ProcessedRecord {
  readonly messageName: string;
  /** Compared when the record is found under an old-scheme id (ids.ts, legacyMessageDocId): another key is another event. */
  readonly correlationKey: string;
  /** SHA-256 of the canonical payload: the same message again is a duplicate, another payload a KEY_COLLISION. */
  readonly payloadHash: string;
  readonly processedAt: Date;
  /** Where it went; null for a dismissed message that concerned no instance. */
  readonly processInstanceId: string | null;
  readonly correlatedVia: CorrelatedVia;
  /** processedAt + INBOX_DEDUP_RETENTION_DAYS; a Firestore TTL policy on this field deletes the record. */
  readonly expireAt: Date;
}

export function processedRef(db: Firestore, id: string): DocumentReference {
  return db.collection(PROCESSED).doc(id);
}

/** The fields of an inbox document a record keeps. */
export interface RecordSource {
  readonly messageName: string | null;
  readonly correlationKey: string | null;
  readonly payloadHash: string;
}

export function processedRecord(
  doc: RecordSource,
  processInstanceId: string | null,
  via: CorrelatedVia,
  now: Date,
  retentionMs: number,
): ProcessedRecord {
  return {
    messageName: doc.messageName ?? '',
    correlationKey: doc.correlationKey ?? '',
    payloadHash: doc.payloadHash,
    processedAt: now,
    processInstanceId,
    correlatedVia: via,
    expireAt: new Date(now.getTime() + retentionMs),
  };
}
