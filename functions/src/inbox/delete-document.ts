import type { Firestore, QueryDocumentSnapshot } from '@google-cloud/firestore';
import { GRPC_FAILED_PRECONDITION } from '../core/errors';
import { RAW_CHUNKS } from './document';

/** Writes per batch: Firestore's limit. */
const WRITES_PER_BATCH = 500;

/**
 * Deletes an inbox document and every chunk of its `rawChunks`, only if the
 * document is unchanged since `snap` was read: 'CHANGED' otherwise, and then
 * nothing is deleted. Deleting a document alone leaves its subcollection
 * behind, where nothing reads or lists it, so the chunks go in the same
 * batch as the document, under the document's precondition: both or
 * neither. (A message is at most 10 MiB, 14 chunks, so one batch holds them;
 * more than a batch's worth would go in batches before the last, chunks
 * first, so a failure still leaves the document with the rest.)
 */
export async function deleteWithChunks(db: Firestore, snap: QueryDocumentSnapshot): Promise<'DELETED' | 'CHANGED'> {
  const ref = snap.ref;
  const chunks = await ref.collection(RAW_CHUNKS).listDocuments();
  // The last WRITES_PER_BATCH - 1 chunks share the document's batch; any before them go first.
  const early = chunks.slice(0, Math.max(0, chunks.length - (WRITES_PER_BATCH - 1)));
  for (let start = 0; start < early.length; start += WRITES_PER_BATCH) {
    const batch = db.batch();
    for (const chunk of early.slice(start, start + WRITES_PER_BATCH)) batch.delete(chunk);
    await batch.commit();
  }
  const batch = db.batch();
  for (const chunk of chunks.slice(early.length)) batch.delete(chunk);
  batch.delete(ref, { lastUpdateTime: snap.updateTime });
  try {
    await batch.commit();
    return 'DELETED';
  } catch (err) {
    if ((err as { code?: unknown }).code === GRPC_FAILED_PRECONDITION) return 'CHANGED';
    throw err;
  }
}
