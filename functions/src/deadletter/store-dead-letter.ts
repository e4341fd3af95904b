import type { Firestore } from '@google-cloud/firestore';
import { runUnitOfWork } from '../engine/store/unit-of-work';
import { collisionDocument, INBOX, INLINE_RAW_BYTES, type InboxDocument, invalidDocument, openDocument } from '../inbox/document';
import { writeRawChunks } from '../inbox/store-message';
import type { PushEnvelope } from '../receiver/envelope';
import type { InboxDraft } from '../receiver/interpret';
import type { DeadLetterSource } from './source';

/** What storing a dead-lettered message did. */
export type DeadLetterOutcome =
  /** New document, PARKED / DEAD_LETTERED, kept for good. */
  | { readonly kind: 'PARKED'; readonly id: string }
  /** The inbox already had the message: the event is recorded on it, its status unchanged. */
  | { readonly kind: 'RECORDED'; readonly id: string; readonly status: string };

/** One entry of a document's `deadLetterEvents`. */
interface DeadLetterEvent {
  readonly at: Date;
  readonly messageId: string;
  readonly sourceSubscription: string | null;
  readonly deliveryCount: number | null;
}

/** The document the receiver would have written, turned into a PARKED / DEAD_LETTERED one. */
function parkedDocument(draft: InboxDraft, envelope: PushEnvelope, now: Date, shards: number, event: DeadLetterEvent, source: DeadLetterSource): { id: string; doc: Record<string, unknown> } {
  const ctx = { envelope, now, shards };
  const base: InboxDocument = draft.kind === 'valid' ? openDocument(draft, ctx) : invalidDocument(draft, ctx);
  return {
    id: draft.id,
    doc: { ...base, status: 'PARKED', reason: 'DEAD_LETTERED', nextAttemptAt: null, parkedAt: now, deadLetter: { sourceSubscription: source.subscription, deliveryCount: source.deliveryCount, attributes: source.attributes }, deadLetterEvents: [event] },
  };
}

/**
 * Stores a dead-lettered message for good. Under the id the receiver would
 * have used: if that document exists (the receiver did store it, and Pub/Sub
 * still gave up, e.g. its 2xx came too late), the event is appended to it and
 * its status (OPEN, DONE, PARKED) stays; a different payload under that id
 * gets its own PARKED document pointing at the first. Otherwise a new PARKED
 * / DEAD_LETTERED document keeps the payload (or raw bytes) and never expires.
 * Raw data larger than 256 KiB goes to `rawChunks` first, as in the receiver.
 */
export async function storeDeadLetter(db: Firestore, draft: InboxDraft, envelope: PushEnvelope, source: DeadLetterSource, now: Date, shards: number): Promise<DeadLetterOutcome> {
  const event: DeadLetterEvent = { at: now, messageId: envelope.messageId, sourceSubscription: source.subscription, deliveryCount: source.deliveryCount };
  if (draft.kind === 'invalid' && draft.rawData.length > INLINE_RAW_BYTES) await writeRawChunks(db, draft.id, draft.rawData);
  const { result } = await runUnitOfWork(db, async (uow): Promise<DeadLetterOutcome> => {
    const ref = db.collection(INBOX).doc(draft.id);
    const existing = await uow.get(ref);
    if (existing === undefined) {
      const parked = parkedDocument(draft, envelope, now, shards, event, source);
      uow.create(ref, parked.doc);
      return { kind: 'PARKED', id: draft.id };
    }
    if (existing.payloadHash === draft.payloadHash || draft.kind === 'invalid') {
      const events = Array.isArray(existing.deadLetterEvents) ? (existing.deadLetterEvents as DeadLetterEvent[]) : [];
      if (!events.some((e) => e.messageId === event.messageId)) uow.set(ref, { ...existing, deadLetterEvents: [...events, event] });
      return { kind: 'RECORDED', id: draft.id, status: String(existing.status) };
    }
    // Same key, different payload: the receiver's KEY_COLLISION rule, parked as dead-lettered.
    const collision = collisionDocument(draft, draft.id, { envelope, now, shards });
    const collisionRef = db.collection(INBOX).doc(collision.id);
    if ((await uow.get(collisionRef)) !== undefined) return { kind: 'RECORDED', id: collision.id, status: 'PARKED' };
    uow.create(collisionRef, { ...collision.doc, reason: 'DEAD_LETTERED', deadLetter: { sourceSubscription: source.subscription, deliveryCount: source.deliveryCount, attributes: source.attributes }, deadLetterEvents: [event] });
    return { kind: 'PARKED', id: collision.id };
  });
  return result;
}
