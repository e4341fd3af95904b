import type { DocumentReference, Firestore } from '@google-cloud/firestore';
import { runUnitOfWork, type UnitOfWork } from '../engine/store/unit-of-work';
import { dedupVerdict } from '../inbox/dedup';
import { collisionDocument, INBOX, INLINE_RAW_BYTES, type InboxDocument, invalidDocument, openDocument } from '../inbox/document';
import { processedRef } from '../inbox/processed';
import { writeRawChunks } from '../inbox/store-message';
import type { InboxDraft, PushEnvelope } from '../inbox/draft';
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

/** Appends the event to an existing document (once per messageId); its status stays. */
function recordOn(uow: UnitOfWork, ref: DocumentReference, existing: Record<string, unknown>, event: DeadLetterEvent): void {
  const events = Array.isArray(existing.deadLetterEvents) ? (existing.deadLetterEvents as DeadLetterEvent[]) : [];
  if (!events.some((e) => e.messageId === event.messageId)) uow.set(ref, { ...existing, deadLetterEvents: [...events, event] });
}

/**
 * Stores a dead-lettered message for good. Under the id the receiver would
 * have used: if the message is known there (the receiver did store it, and
 * Pub/Sub still gave up, e.g. its 2xx came too late), the event is appended
 * to its document and its status (OPEN, DONE, PARKED) stays; if only its
 * processed record is left (DONE, and the document expired), nothing is
 * written; a different payload gets its own PARKED document pointing at the
 * first. Like the receiver it looks under the old-scheme id too
 * (ids.ts, legacyMessageDocId). Otherwise a new PARKED / DEAD_LETTERED
 * document keeps the payload (or raw bytes) and never expires. Raw data
 * larger than 256 KiB goes to `rawChunks` first, as in the receiver.
 */
export async function storeDeadLetter(db: Firestore, draft: InboxDraft, envelope: PushEnvelope, source: DeadLetterSource, now: Date, shards: number): Promise<DeadLetterOutcome> {
  const event: DeadLetterEvent = { at: now, messageId: envelope.messageId, sourceSubscription: source.subscription, deliveryCount: source.deliveryCount };
  if (draft.kind === 'invalid' && draft.rawData.length > INLINE_RAW_BYTES) await writeRawChunks(db, draft.id, draft.rawData);
  const deadLetter = { sourceSubscription: source.subscription, deliveryCount: source.deliveryCount, attributes: source.attributes };
  const { result } = await runUnitOfWork(db, async (uow): Promise<DeadLetterOutcome> => {
    const inbox = (id: string): DocumentReference => db.collection(INBOX).doc(id);
    const createParked = (): DeadLetterOutcome => {
      uow.create(inbox(draft.id), parkedDocument(draft, envelope, now, shards, event, source).doc);
      return { kind: 'PARKED', id: draft.id };
    };
    if (draft.kind === 'invalid') {
      const existing = await uow.get(inbox(draft.id));
      if (existing === undefined) return createParked();
      recordOn(uow, inbox(draft.id), existing, event);
      return { kind: 'RECORDED', id: draft.id, status: String(existing.status) };
    }
    const found = { doc: await uow.get(inbox(draft.id)), record: await uow.get(processedRef(db, draft.id)), legacyDoc: await uow.get(inbox(draft.legacyId)), legacyRecord: await uow.get(processedRef(db, draft.legacyId)) };
    const verdict = dedupVerdict(draft, found);
    switch (verdict.kind) {
      case 'NOTHING':
      case 'OTHER_KEY_UNDER_LEGACY_ID':
        return createParked();
      case 'DUPLICATE': {
        const existing = await uow.get(inbox(verdict.id));
        if (existing === undefined) return { kind: 'RECORDED', id: verdict.id, status: 'DONE' };
        recordOn(uow, inbox(verdict.id), existing, event);
        return { kind: 'RECORDED', id: verdict.id, status: String(existing.status) };
      }
      case 'COLLISION': {
        // Same identity, different payload: the receiver's KEY_COLLISION rule, parked as dead-lettered.
        const collision = collisionDocument(draft, verdict.firstId, { envelope, now, shards });
        if ((await uow.get(inbox(collision.id))) !== undefined || (await uow.get(processedRef(db, collision.id))) !== undefined) return { kind: 'RECORDED', id: collision.id, status: 'PARKED' };
        uow.create(inbox(collision.id), { ...collision.doc, reason: 'DEAD_LETTERED', deadLetter, deadLetterEvents: [event] });
        return { kind: 'PARKED', id: collision.id };
      }
    }
  });
  return result;
}
