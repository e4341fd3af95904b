import type { DocumentReference } from '@google-cloud/firestore';
import type { LaneEntry } from '../engine/store/collections';
import type { UnitOfWork } from '../engine/store/unit-of-work';
import { INBOX, type InboxDocument } from '../inbox/document';
import type { Decision } from './classify';

/** An inbox document as the relay reads it (Timestamps already Dates). */
export type InboxView = InboxDocument & {
  readonly processInstanceId?: string | null;
  /** Set by `inbox requeue`; the relay's buffer window counts from it (classify.ts). */
  readonly requeuedAt?: Date | null;
};

export function inboxRef(uow: UnitOfWork, id: string): DocumentReference {
  return uow.db.collection(INBOX).doc(id);
}

/** The document's place in its key's lane. */
export function laneEntryOf(id: string, doc: InboxView): LaneEntry {
  return { inboxId: id, messageName: doc.messageName ?? '', publishTime: doc.source.publishTime ?? null, receivedAt: doc.receivedAt };
}

/**
 * Writes a relay decision onto the inbox document. DONE gets `expireAt`
 * (retention, for a Firestore TTL policy); PARKED never expires and keeps
 * payload, reason, lastError and attempts.
 */
export function writeDecision(uow: UnitOfWork, id: string, doc: InboxView, decision: Decision, now: Date, retentionMs: number, via: 'RELAY' | 'BUFFER' = 'RELAY'): void {
  const ref = inboxRef(uow, id);
  switch (decision.kind) {
    case 'DONE':
      uow.set(ref, { ...doc, status: 'DONE', processInstanceId: decision.processInstanceId, processedAt: now, expireAt: new Date(now.getTime() + retentionMs), correlatedVia: via, nextAttemptAt: null });
      return;
    case 'RETRY':
      uow.set(ref, { ...doc, attempts: decision.attempts, nextAttemptAt: decision.nextAttemptAt, lastError: decision.lastError, lastAttemptAt: now });
      return;
    case 'PARK':
      uow.set(ref, { ...doc, status: 'PARKED', reason: decision.reason, attempts: decision.attempts, lastError: decision.lastError, parkDetails: decision.details, parkedAt: now, nextAttemptAt: null, lastAttemptAt: now });
      return;
  }
}
