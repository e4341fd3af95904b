import type { DocumentReference } from '@google-cloud/firestore';
import type { LaneEntry } from '../engine/store/collections';
import type { UnitOfWork } from '../engine/store/unit-of-work';
import { doneRetention } from '../inbox/claim-check';
import { INBOX, type InboxDocument } from '../inbox/document';
import { type CorrelatedVia, processedRecord, processedRef } from '../inbox/processed';
import type { Decision } from './decide';

/**
 * An inbox document as the relay reads it (Timestamps already Dates).
 * `relayAttempt`: the relay call and attempt that last wrote it (relay-one.ts, Ledger).
 */
export type InboxView = InboxDocument & {
  readonly processInstanceId?: string | null;
  /** Set by `inbox requeue`; the relay's buffer window counts from it (decide.ts). */
  readonly requeuedAt?: Date | null;
  readonly relayAttempt?: string | null;
};

export function inboxRef(uow: UnitOfWork, id: string): DocumentReference {
  return uow.db.collection(INBOX).doc(id);
}

/** The document's place in its key's lane. */
export function laneEntryOf(id: string, doc: InboxView): LaneEntry {
  return {
    inboxId: id,
    messageName: doc.messageName ?? '',
    publishTime: doc.source.publishTime ?? null,
    receivedAt: doc.receivedAt,
  };
}

/** How long what a DONE document leaves behind is kept, ms. */
export interface Retention {
  /** The DONE document with its payload (INBOX_DONE_RETENTION_DAYS). */
  readonly doneMs: number;
  /** Its processed record (INBOX_DEDUP_RETENTION_DAYS): the receiver's memory of it after the document expired. */
  readonly recordMs: number;
}

/**
 * Writes a relay decision onto the inbox document. DONE gets `expireAt`
 * (retention, for a Firestore TTL policy), or `payloadExpireAt` when its
 * payload is offloaded or kept in `rawChunks` (the payload sweep deletes the
 * object or chunks first, then the document: jobs/sweep-payloads.ts), and, in the same transaction, its
 * processed record (inbox/processed.ts), which outlives it so that a replay
 * of the message is still a duplicate; PARKED never expires and keeps
 * payload, reason, lastError and attempts. `via`: RELAY (a token waited),
 * BUFFER (a token reached its waiting point and took it), START (it started
 * its instance by a message start event). `relayAttempt` marks the relay
 * call and attempt that wrote it (null for the buffer's write).
 */
export function writeDecision(
  uow: UnitOfWork,
  id: string,
  doc: InboxView,
  decision: Decision,
  now: Date,
  retention: Retention,
  via: Exclude<CorrelatedVia, 'DISMISSED'> = 'RELAY',
  relayAttempt: string | null = null,
): void {
  const ref = inboxRef(uow, id);
  // The buffer's write is part of another document's transaction, which carries that one's mark.
  const base = { ...doc, relayAttempt };
  switch (decision.kind) {
    case 'DONE':
      // A document with an offloaded payload or chunks gets payloadExpireAt instead of expireAt: the payload sweep deletes them, then it.
      uow.set(ref, {
        ...base,
        status: 'DONE',
        processInstanceId: decision.processInstanceId,
        processedAt: now,
        ...doneRetention(doc, now, retention.doneMs),
        correlatedVia: via,
        nextAttemptAt: null,
      });
      // A blind set: no read, one write. Set, not create: a document requeued and correlated again after its record expired gets a new one.
      uow.set(processedRef(uow.db, id), {
        ...processedRecord(doc, decision.processInstanceId, via, now, retention.recordMs),
      });
      return;
    case 'RETRY':
      uow.set(ref, {
        ...base,
        attempts: decision.attempts,
        nextAttemptAt: decision.nextAttemptAt,
        lastError: decision.lastError,
        lastAttemptAt: now,
      });
      return;
    case 'PARK':
      uow.set(ref, {
        ...base,
        status: 'PARKED',
        reason: decision.reason,
        attempts: decision.attempts,
        lastError: decision.lastError,
        parkDetails: decision.details,
        parkedAt: now,
        nextAttemptAt: null,
        lastAttemptAt: now,
      });
      return;
  }
}
