import type { Firestore } from '@google-cloud/firestore';
import type * as FirestoreModule from '@google-cloud/firestore';
import { correlationKeyDocId } from '../engine/ids';
import { COLLECTIONS, type LaneEntry } from '../engine/store/collections';
import { errorCode, GRPC_ABORTED, GRPC_ALREADY_EXISTS, isRefusedAsExisting } from '../core/errors';
import { lazy } from '../core/lazy';
import type { InboxDraft, InvalidDraft, PushEnvelope, ValidDraft } from './draft';
import { dedupVerdict, type Found } from './dedup';
import {
  collisionDocument,
  INBOX,
  type InboxDocument,
  invalidDocument,
  openDocument,
  RAW_CHUNKS,
  rawChunks,
} from './document';
import { processedRef } from './processed';
import { mustOffload, type OffloadSettings, writePayloadObject, type WrittenObject } from './offload-payload';

/** What storing one pushed message did. Every outcome is safe to ack. */
export type StoreOutcome =
  | { readonly kind: 'STORED'; readonly id: string; readonly doc: InboxDocument }
  /** The same message again (redelivery, duplicate publish, a replay after its DONE document expired): nothing changed. `id`: where it is (or was). */
  | { readonly kind: 'DUPLICATE'; readonly id: string; readonly documentExists: boolean }
  /** Same dedup identity (name, key, dedup key), different payload: stored as its own PARKED document. */
  | {
      readonly kind: 'COLLISION';
      readonly id: string;
      readonly firstId: string;
      readonly doc: InboxDocument;
      readonly duplicate: boolean;
    };

export interface StoreContext {
  readonly envelope: PushEnvelope;
  readonly now: Date;
  readonly shards: number;
  /**
   * Where a valid payload over `offloadBytes` goes (the inbox's bucket).
   * null: never offloaded (tools and tests whose payloads are small; a
   * larger one then meets Firestore's 1 MiB document limit).
   */
  readonly offload: OffloadSettings | null;
  /** The receipt span's W3C traceparent, kept on an OPEN document for the relay's span; null/absent: none. */
  readonly traceparent?: string | null;
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

/**
 * A delete that changes nothing and fails the whole commit if the document
 * exists: "this must not exist" as part of a batch, at no extra round trip
 * (a read before the commit would be one more on the ack path).
 */
const ABSENT = { exists: false } as const;

/**
 * create() that fails if the document or its processed record exists: false
 * then, once a read confirms one of them is there. Any other error propagates (technical).
 */
async function createUnlessKnown(db: Firestore, id: string, doc: InboxDocument): Promise<boolean> {
  const ref = db.collection(INBOX).doc(id);
  const batch = db.batch();
  batch.create(ref, doc);
  batch.delete(processedRef(db, id), ABSENT);
  try {
    await batch.commit();
    return true;
  } catch (err) {
    if (!isRefusedAsExisting(err)) throw err;
    const found = await db.getAll(ref, processedRef(db, id));
    if (found.some((s) => s.exists)) return false;
    throw err;
  }
}

/**
 * create() of an OPEN document, atomically with its entry in the key's lane
 * (correlationKeys/{hash}.open, an arrayUnion: no read, no transaction). The
 * lane gives the relay its per-key order and the engine its buffer as reads
 * by id. In the same commit it asserts that no processed record exists under
 * the id (a replay after the DONE document expired) and, with `legacy`, that
 * neither a document nor a record exists under the id the message had before
 * the correlation key was part of it. If any exists, the commit fails whole.
 */
async function createOpen(
  db: Firestore,
  draft: ValidDraft,
  doc: InboxDocument,
  legacy: boolean,
): Promise<{ readonly refused: unknown } | null> {
  const { FieldValue } = firestoreModule();
  const correlationKey = doc.correlationKey ?? '';
  const entry: LaneEntry = {
    inboxId: draft.id,
    messageName: doc.messageName ?? '',
    publishTime: doc.source.publishTime,
    receivedAt: doc.receivedAt,
  };
  const batch = db.batch();
  batch.create(db.collection(INBOX).doc(draft.id), doc);
  batch.delete(processedRef(db, draft.id), ABSENT);
  if (legacy) {
    batch.delete(db.collection(INBOX).doc(draft.legacyId), ABSENT);
    batch.delete(processedRef(db, draft.legacyId), ABSENT);
  }
  batch.set(
    db.collection(COLLECTIONS.correlationKeys).doc(correlationKeyDocId(correlationKey)),
    { correlationKey, open: FieldValue.arrayUnion(entry), updatedAt: doc.receivedAt },
    { merge: true },
  );
  try {
    await batch.commit();
    return null;
  } catch (err) {
    if (isRefusedAsExisting(err)) return { refused: err };
    throw err;
  }
}

/** The four places a message may already be, in one round trip. */
async function findStored(db: Firestore, draft: ValidDraft): Promise<Found> {
  const refs = [
    db.collection(INBOX).doc(draft.id),
    processedRef(db, draft.id),
    db.collection(INBOX).doc(draft.legacyId),
    processedRef(db, draft.legacyId),
  ];
  const [doc, record, legacyDoc, legacyRecord] = (await db.getAll(...refs)).map((s) => s.data());
  return { doc, record, legacyDoc, legacyRecord };
}

/** Attempts of the create: a refusal whose cause is gone by the time it is read (a TTL deletion in between) is tried again. */
const STORE_ATTEMPTS = 3;

/**
 * A valid message. A payload over the threshold is written to the bucket
 * first (before any document points at it), so an outage of the store is a
 * retryable failure with nothing written to Firestore; a redelivery finds
 * the object (created: false) and, the document being there too, is a
 * DUPLICATE. An object that no document points at in the end (a replay
 * after its DONE document was purged) is left to `inbox repair
 * orphan-payloads`: "this call created it" does not prove that no document
 * uses it (a delivery that answered 503 at its deadline keeps running while
 * the redelivery creates the document on the same object), and the
 * receiver's identity has no delete right anyway.
 */
async function storeValid(db: Firestore, draft: ValidDraft, ctx: StoreContext): Promise<StoreOutcome> {
  const offload = mustOffload(draft, ctx.offload) ? ctx.offload : null;
  const written: WrittenObject | null = offload === null ? null : await writePayloadObject(offload, draft, draft.id);
  const doc = openDocument(draft, ctx, written?.offloaded ?? null);
  let legacy = true;
  let refusal: unknown;
  for (let attempt = 0; attempt < STORE_ATTEMPTS; attempt++) {
    const result = await createOpen(db, draft, doc, legacy);
    if (result === null) return { kind: 'STORED', id: draft.id, doc };
    refusal = result.refused;
    const verdict = dedupVerdict(draft, await findStored(db, draft));
    switch (verdict.kind) {
      case 'DUPLICATE':
        return { kind: 'DUPLICATE', id: verdict.id, documentExists: verdict.documentExists };
      case 'COLLISION':
        return storeCollision(db, draft, verdict.firstId, ctx, written);
      case 'OTHER_KEY_UNDER_LEGACY_ID':
        legacy = false;
        break;
      case 'NOTHING':
        break;
    }
  }
  // Refused each time, yet nothing found: not a duplicate. Never acked; Pub/Sub redelivers (and finds its object).
  if (errorCode(refusal) === GRPC_ALREADY_EXISTS)
    throw Object.assign(
      new Error(
        `inbox write for ${draft.id} refused as existing ${STORE_ATTEMPTS} times, but nothing exists under its ids`,
      ),
      { code: GRPC_ABORTED },
    );
  throw refusal;
}

/**
 * The dedup identity is taken by another payload. Swallowing this one would
 * be the silent loss the article warns about; keep it as its own parked
 * document. An offloaded one points at the object already written for it
 * (named after the first id and its own hash, so no other payload shares
 * it): no second upload inside the write deadline.
 */
async function storeCollision(
  db: Firestore,
  draft: ValidDraft,
  firstId: string,
  ctx: StoreContext,
  written: WrittenObject | null,
): Promise<StoreOutcome> {
  const collision = collisionDocument(draft, firstId, ctx, written?.offloaded ?? null);
  const created = await createUnlessKnown(db, collision.id, collision.doc);
  return { kind: 'COLLISION', id: collision.id, firstId, doc: collision.doc, duplicate: !created };
}

/** create(); false if the document already exists. Any other error propagates (technical). */
async function createIfAbsent(db: Firestore, id: string, doc: InboxDocument): Promise<boolean> {
  try {
    await db.collection(INBOX).doc(id).create(doc);
    return true;
  } catch (err) {
    if (errorCode(err) === GRPC_ALREADY_EXISTS) return false;
    throw err;
  }
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

/**
 * Deletes every chunk under `inbox/{id}/rawChunks`: those of a document whose
 * payload was offloaded later (a dead letter kept in chunks, then requeued),
 * before the document itself goes, since deleting a document leaves its
 * subcollection behind. Idempotent: none left is fine.
 */
export async function deleteRawChunks(db: Firestore, id: string): Promise<number> {
  const chunks = await db.collection(INBOX).doc(id).collection(RAW_CHUNKS).listDocuments();
  for (let start = 0; start < chunks.length; start += 500) {
    const batch = db.batch();
    for (const chunk of chunks.slice(start, start + 500)) batch.delete(chunk);
    await batch.commit();
  }
  return chunks.length;
}

async function storeInvalid(db: Firestore, draft: InvalidDraft, ctx: StoreContext): Promise<StoreOutcome> {
  const doc = invalidDocument(draft, ctx);
  if (doc.rawDataChunks > 0) await writeRawChunks(db, draft.id, draft.rawData);
  return (await createIfAbsent(db, draft.id, doc))
    ? { kind: 'STORED', id: draft.id, doc }
    : { kind: 'DUPLICATE', id: draft.id, documentExists: true };
}

/**
 * Stores one message under its deterministic id. Idempotent: a redelivery is
 * a no-op. Throws only for technical failures, which the caller answers 5xx.
 */
export function storeMessage(db: Firestore, draft: InboxDraft, ctx: StoreContext): Promise<StoreOutcome> {
  return draft.kind === 'valid' ? storeValid(db, draft, ctx) : storeInvalid(db, draft, ctx);
}
