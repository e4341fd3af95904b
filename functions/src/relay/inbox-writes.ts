import type { DocumentReference } from '@google-cloud/firestore';
import type { LaneEntry } from '../engine/store/collections';
import type { UnitOfWork } from '../engine/store/unit-of-work';
import { INBOX, type InboxDocument } from '../inbox/document';
import type { Decision } from './classify';

/**
 * An inbox document as the relay reads it (Timestamps already Dates).
 * `relayAttempt`: the relay call and attempt that last wrote it (relay-one.ts, Ledger).
 */
export type InboxView = InboxDocument & { readonly processInstanceId?: string | null; readonly relayAttempt?: string | null };

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
 * payload, reason, lastError and attempts. `relayAttempt` marks the relay
 * call and attempt that wrote it (null for the buffer's write).
 */
export function writeDecision(uow: UnitOfWork, id: string, doc: InboxView, decision: Decision, now: Date, retentionMs: number, via: 'RELAY' | 'BUFFER' = 'RELAY', relayAttempt: string | null = null): void {
  const ref = inboxRef(uow, id);
  // The buffer's write is part of another document's transaction, which carries that one's mark.
  const base = { ...doc, relayAttempt };
  switch (decision.kind) {
    case 'DONE':
      uow.set(ref, { ...base, status: 'DONE', processInstanceId: decision.processInstanceId, processedAt: now, expireAt: new Date(now.getTime() + retentionMs), correlatedVia: via, nextAttemptAt: null });
      return;
    case 'RETRY':
      uow.set(ref, { ...base, attempts: decision.attempts, nextAttemptAt: decision.nextAttemptAt, lastError: decision.lastError, lastAttemptAt: now });
      return;
    case 'PARK':
      uow.set(ref, { ...base, status: 'PARKED', reason: decision.reason, attempts: decision.attempts, lastError: decision.lastError, parkDetails: decision.details, parkedAt: now, nextAttemptAt: null, lastAttemptAt: now });
      return;
  }
}
