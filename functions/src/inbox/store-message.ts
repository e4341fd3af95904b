import type { Firestore } from '@google-cloud/firestore';
import type * as FirestoreModule from '@google-cloud/firestore';
import { correlationKeyDocId } from '../engine/ids';
import { COLLECTIONS, type LaneEntry } from '../engine/store/collections';
import { errorCode, GRPC_ALREADY_EXISTS } from '../core/errors';
import { lazy } from '../core/lazy';
import type { PushEnvelope } from '../receiver/envelope';
import type { InboxDraft, InvalidDraft, ValidDraft } from '../receiver/interpret';
import { collisionDocument, INBOX, type InboxDocument, invalidDocument, openDocument, RAW_CHUNKS, rawChunks } from './document';

/** What storing one pushed message did. Every outcome is safe to ack. */
export type StoreOutcome =
  | { readonly kind: 'STORED'; readonly id: string; readonly doc: InboxDocument }
  /** The same message again (redelivery or duplicate publish): nothing changed. */
  | { readonly kind: 'DUPLICATE'; readonly id: string }
  /** Same dedup key, different payload: stored as its own PARKED document. */
  | { readonly kind: 'COLLISION'; readonly id: string; readonly firstId: string; readonly doc: InboxDocument; readonly duplicate: boolean };

export interface StoreContext {
  readonly envelope: PushEnvelope;
  readonly now: Date;
  readonly shards: number;
}

/** Loaded on first use (the receiver starts without Google client libraries); cached, as require() from here resolves the path again on every call. */
const firestoreModule = lazy(() => require('@google-cloud/firestore') as typeof FirestoreModule);

/**
 * Chunks per batch: 4 × 768 KiB (3 MiB). Firestore takes 10 MiB per request,
 * but the emulator refuses any gRPC message over 4 MiB (RESOURCE_EXHAUSTED,
 * which the client retries until its own deadline), so a batch of 8 made
 * every message over ~5 MiB answer 503 forever on the local stack.
 */
const CHUNKS_PER_BATCH = 4;

function isAlreadyExists(err: unknown): boolean {
  return errorCode(err) === GRPC_ALREADY_EXISTS;
}

/** create(); false if the document already exists. Any other error propagates (technical). */
async function createIfAbsent(db: Firestore, id: string, doc: InboxDocument): Promise<boolean> {
  try {
    await db.collection(INBOX).doc(id).create(doc);
    return true;
  } catch (err) {
    if (isAlreadyExists(err)) return false;
    throw err;
  }
}

/**
 * create() of an OPEN document, atomically with its entry in the key's lane
 * (correlationKeys/{hash}.open, an arrayUnion: no read, no transaction). The
 * lane gives the relay its per-key order and the engine its buffer as reads
 * by id. If the document exists, the batch fails whole and the lane is untouched.
 */
async function createOpen(db: Firestore, id: string, doc: InboxDocument): Promise<boolean> {
  const { FieldValue } = firestoreModule();
  const correlationKey = doc.correlationKey ?? '';
  const entry: LaneEntry = { inboxId: id, messageName: doc.messageName ?? '', publishTime: doc.source.publishTime, receivedAt: doc.receivedAt };
  const batch = db.batch();
  batch.create(db.collection(INBOX).doc(id), doc);
  batch.set(db.collection(COLLECTIONS.correlationKeys).doc(correlationKeyDocId(correlationKey)), { correlationKey, open: FieldValue.arrayUnion(entry), updatedAt: doc.receivedAt }, { merge: true });
  try {
    await batch.commit();
    return true;
  } catch (err) {
    if (isAlreadyExists(err)) return false;
    throw err;
  }
}

async function storeValid(db: Firestore, draft: ValidDraft, ctx: StoreContext): Promise<StoreOutcome> {
  const doc = openDocument(draft, ctx);
  if (await createOpen(db, draft.id, doc)) return { kind: 'STORED', id: draft.id, doc };

  const existing = await db.collection(INBOX).doc(draft.id).get();
  if (existing.get('payloadHash') === draft.payloadHash) return { kind: 'DUPLICATE', id: draft.id };

  // The dedup key is taken by another payload. Swallowing this one would be the
  // silent loss the article warns about; keep it as its own parked document.
  const collision = collisionDocument(draft, draft.id, ctx);
  const created = await createIfAbsent(db, collision.id, collision.doc);
  return { kind: 'COLLISION', id: collision.id, firstId: draft.id, doc: collision.doc, duplicate: !created };
}

/**
 * Writes raw data too large for the document into `inbox/{id}/rawChunks`.
 * Chunks first, document last: the document's existence means "complete";
 * set() with deterministic ids makes a retried partial write harmless.
 */
export async function writeRawChunks(db: Firestore, id: string, rawData: Buffer): Promise<void> {
  const chunks = rawChunks(rawData);
  const ref = db.collection(INBOX).doc(id).collection(RAW_CHUNKS);
  for (let start = 0; start < chunks.length; start += CHUNKS_PER_BATCH) {
    const batch = db.batch();
    chunks.slice(start, start + CHUNKS_PER_BATCH).forEach((bytes, i) => {
      batch.set(ref.doc(String(start + i)), { index: start + i, bytes });
    });
    await batch.commit();
  }
}

async function storeInvalid(db: Firestore, draft: InvalidDraft, ctx: StoreContext): Promise<StoreOutcome> {
  const doc = invalidDocument(draft, ctx);
  if (doc.rawDataChunks > 0) await writeRawChunks(db, draft.id, draft.rawData);
  return (await createIfAbsent(db, draft.id, doc)) ? { kind: 'STORED', id: draft.id, doc } : { kind: 'DUPLICATE', id: draft.id };
}

/**
 * Stores one message under its deterministic id. Idempotent: a redelivery is
 * a no-op. Throws only for technical failures, which the caller answers 5xx.
 */
export function storeMessage(db: Firestore, draft: InboxDraft, ctx: StoreContext): Promise<StoreOutcome> {
  return draft.kind === 'valid' ? storeValid(db, draft, ctx) : storeInvalid(db, draft, ctx);
}
