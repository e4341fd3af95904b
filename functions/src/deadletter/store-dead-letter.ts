import type { DocumentReference, Firestore } from '@google-cloud/firestore';
import { errorMessage, withDeadline } from '../core/errors';
import { runUnitOfWork, type UnitOfWork } from '../engine/store/unit-of-work';
import { dedupVerdict } from '../inbox/dedup';
import { summarize } from '../inbox/claim-check';
import {
  collisionDocument,
  INBOX,
  INLINE_RAW_BYTES,
  type InboxDocument,
  invalidDocument,
  openDocument,
  RAW_CHUNK_BYTES,
} from '../inbox/document';
import { processedRef } from '../inbox/processed';
import { collisionDocId } from '../inbox/ids';
import { writeRawChunks } from '../inbox/store-message';
import type { InboxDraft, PushEnvelope, ValidDraft } from '../inbox/draft';
import { mustOffload, type OffloadSettings, writePayloadObject, type WrittenObject } from '../inbox/offload-payload';
import type { OffloadedPayload } from '../inbox/claim-check';
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

/**
 * The message's bytes when its valid payload is too large for a document
 * and there is no payload store to offload it to (tools that store dead
 * letters without one): like an unreadable message, it keeps the bytes in
 * `rawChunks` and the document its summary. null: the payload fits, or
 * there is a store (production), which takes it as the receiver does.
 */
function largeValidBytes(draft: InboxDraft, envelope: PushEnvelope, offload: OffloadSettings | null): Buffer | null {
  // With a store, a payload is kept as the receiver keeps it: inline up to the threshold, offloaded above.
  if (
    offload !== null ||
    draft.kind !== 'valid' ||
    Buffer.byteLength(draft.canonicalPayload, 'utf8') <= INLINE_RAW_BYTES
  )
    return null;
  return Buffer.from(envelope.data, 'base64');
}

/** A valid message's document with the payload's summary and the message's bytes in chunks when it is too large (largeValidBytes). */
function withChunkedBytes(doc: InboxDocument, draft: ValidDraft, raw: Buffer | null): InboxDocument {
  if (raw === null) return doc;
  return {
    ...doc,
    payload: summarize(draft.payload),
    rawData: null,
    rawDataForm: 'DECODED',
    rawDataBytes: raw.length,
    rawDataChunks: Math.ceil(raw.length / RAW_CHUNK_BYTES),
  };
}

/** Where a new dead-letter document of this message would be created (its id, or its collision's), or null: the inbox has it. */
async function chunkTarget(db: Firestore, draft: ValidDraft): Promise<string | null> {
  const refs = [
    db.collection(INBOX).doc(draft.id),
    processedRef(db, draft.id),
    db.collection(INBOX).doc(draft.legacyId),
    processedRef(db, draft.legacyId),
  ];
  const [doc, record, legacyDoc, legacyRecord] = (await db.getAll(...refs)).map((snap) => snap.data());
  const verdict = dedupVerdict(draft, { doc, record, legacyDoc, legacyRecord });
  if (verdict.kind === 'DUPLICATE') return null;
  return verdict.kind === 'COLLISION' ? collisionDocId(verdict.firstId, draft.payloadHash) : draft.id;
}

/** The document the receiver would have written, turned into a PARKED / DEAD_LETTERED one. */
function parkedDocument(
  draft: InboxDraft,
  envelope: PushEnvelope,
  now: Date,
  shards: number,
  event: DeadLetterEvent,
  source: DeadLetterSource,
  offloaded: OffloadedPayload | null,
  large: Buffer | null,
): { id: string; doc: Record<string, unknown> } {
  const ctx = { envelope, now, shards };
  const base: InboxDocument =
    draft.kind === 'valid'
      ? withChunkedBytes(openDocument(draft, ctx, offloaded), draft, large)
      : invalidDocument(draft, ctx);
  return {
    id: draft.id,
    doc: {
      ...base,
      status: 'PARKED',
      reason: 'DEAD_LETTERED',
      nextAttemptAt: null,
      parkedAt: now,
      deadLetter: {
        sourceSubscription: source.subscription,
        deliveryCount: source.deliveryCount,
        attributes: source.attributes,
      },
      deadLetterEvents: [event],
    },
  };
}

/** Appends the event to an existing document (once per messageId); its status stays. */
function recordOn(
  uow: UnitOfWork,
  ref: DocumentReference,
  existing: Record<string, unknown>,
  event: DeadLetterEvent,
): void {
  const events = Array.isArray(existing.deadLetterEvents) ? (existing.deadLetterEvents as DeadLetterEvent[]) : [];
  if (!events.some((e) => e.messageId === event.messageId))
    uow.set(ref, { ...existing, deadLetterEvents: [...events, event] });
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
 * larger than 256 KiB goes to `rawChunks` first, as in the receiver; a
 * valid payload over INBOX_OFFLOAD_BYTES goes to the payload bucket first,
 * as in the receiver (`offload`), so a requeued dead letter hands its
 * process the whole report. If the bucket cannot be written, the bytes go
 * to `rawChunks` instead (nothing comes after this endpoint) and
 * `inbox requeue` offloads them before the document is reopened.
 */
export async function storeDeadLetter(
  db: Firestore,
  draft: InboxDraft,
  envelope: PushEnvelope,
  source: DeadLetterSource,
  now: Date,
  shards: number,
  offload: (OffloadSettings & { readonly timeoutMs: number }) | null = null,
): Promise<DeadLetterOutcome> {
  const event: DeadLetterEvent = {
    at: now,
    messageId: envelope.messageId,
    sourceSubscription: source.subscription,
    deliveryCount: source.deliveryCount,
  };
  if (draft.kind === 'invalid' && draft.rawData.length > INLINE_RAW_BYTES)
    await writeRawChunks(db, draft.id, draft.rawData);
  // Objects and chunks before the document, under the id it will be created at (read first, outside the unit of
  // work): none for a message the inbox already has, so nothing hangs under a document that does not declare it.
  let written: WrittenObject | null = null;
  let store = offload;
  if (draft.kind === 'valid' && mustOffload(draft, offload)) {
    const target = await chunkTarget(db, draft);
    try {
      // A third of the write deadline at most: a bucket that hangs must leave time for the chunks (an object that
      // lands late is an orphan that orphan-payloads leaves alone while the document waits for its requeue).
      if (target !== null)
        written = await withDeadline('dead-letter offload', Math.max(1, Math.floor(offload.timeoutMs / 3)), () =>
          writePayloadObject(offload, draft, target),
        );
    } catch (err) {
      // The last stop keeps what it was given whatever else is down: in Firestore chunks, offloaded by `inbox requeue`.
      offload.log.warn('payload bucket unreachable: dead letter kept in rawChunks; `inbox requeue` offloads it', {
        inboxId: target,
        error: errorMessage(err),
      });
      store = null;
    }
  }
  const offloaded = written?.offloaded ?? null;
  const largeValid = largeValidBytes(draft, envelope, store);
  if (largeValid !== null && draft.kind === 'valid') {
    const target = await chunkTarget(db, draft);
    if (target !== null) await writeRawChunks(db, target, largeValid);
  }
  const deadLetter = {
    sourceSubscription: source.subscription,
    deliveryCount: source.deliveryCount,
    attributes: source.attributes,
  };
  const { result } = await runUnitOfWork(db, async (uow): Promise<DeadLetterOutcome> => {
    const inbox = (id: string): DocumentReference => db.collection(INBOX).doc(id);
    const createParked = (): DeadLetterOutcome => {
      uow.create(
        inbox(draft.id),
        parkedDocument(draft, envelope, now, shards, event, source, offloaded, largeValid).doc,
      );
      return { kind: 'PARKED', id: draft.id };
    };
    if (draft.kind === 'invalid') {
      const existing = await uow.get(inbox(draft.id));
      if (existing === undefined) return createParked();
      recordOn(uow, inbox(draft.id), existing, event);
      return { kind: 'RECORDED', id: draft.id, status: String(existing.status) };
    }
    const found = {
      doc: await uow.get(inbox(draft.id)),
      record: await uow.get(processedRef(db, draft.id)),
      legacyDoc: await uow.get(inbox(draft.legacyId)),
      legacyRecord: await uow.get(processedRef(db, draft.legacyId)),
    };
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
        const collision = collisionDocument(draft, verdict.firstId, { envelope, now, shards }, offloaded);
        const collisionDoc = withChunkedBytes(collision.doc, draft, largeValid);
        if (
          (await uow.get(inbox(collision.id))) !== undefined ||
          (await uow.get(processedRef(db, collision.id))) !== undefined
        )
          return { kind: 'RECORDED', id: collision.id, status: 'PARKED' };
        uow.create(inbox(collision.id), {
          ...collisionDoc,
          reason: 'DEAD_LETTERED',
          deadLetter,
          deadLetterEvents: [event],
        });
        return { kind: 'PARKED', id: collision.id };
      }
    }
  });
  // Raced (the inbox got the message meanwhile): an object no document points at is left to `inbox repair orphan-payloads`.
  return result;
}
