/**
 * The raw data the receiver kept of a message: inline (`rawData`, up to
 * 256 KiB) or in the `rawChunks` subcollection. One reader for both
 * faces: `inbox show --raw` writes what {@link rawBytes} reads, the
 * console shows its first bytes as text and offers the same bytes for
 * download (GET /api/documents/ID/raw).
 */
import type { DocumentData, Firestore } from '@google-cloud/firestore';
import { INBOX, RAW_CHUNK_BYTES, RAW_CHUNKS } from '../inbox/document';
import { RAW_TEXT_BYTES, rawTextOf } from './raw-text';
import type { OperationsDeps, RawDataView } from './types';

/** Whether a stored document keeps raw data: inline, or in chunks. */
export function keepsRawData(stored: DocumentData): boolean {
  return stored.rawData instanceof Uint8Array || Number(stored.rawDataChunks ?? 0) > 0;
}

const chunkBytes = (bytes: unknown): Buffer => (bytes instanceof Uint8Array ? Buffer.from(bytes) : Buffer.alloc(0));

/**
 * The bytes kept in the document (`rawData`) or its `rawChunks`, in order;
 * null: none. With `limit`, at least the first `limit` bytes (when there
 * are that many) and only the chunks that hold them: the console's text
 * needs the first 64 KiB of a message that may be many MiB.
 */
export async function rawBytes(
  db: Firestore,
  id: string,
  stored: DocumentData,
  options: { readonly limit?: number } = {},
): Promise<Buffer | null> {
  if (stored.rawData instanceof Uint8Array) return Buffer.from(stored.rawData);
  const count = Number(stored.rawDataChunks ?? 0);
  if (!(count > 0)) return null;
  const chunks = db.collection(INBOX).doc(id).collection(RAW_CHUNKS);
  let found: Array<{ index: number; bytes: unknown }>;
  if (options.limit === undefined) {
    found = (await chunks.get()).docs.map((d) => ({ index: Number(d.get('index')), bytes: d.get('bytes') as unknown }));
  } else {
    // writeRawChunks names chunk i `i`: the first ones are read by name, no query.
    const wanted = Math.min(count, Math.max(1, Math.ceil(options.limit / RAW_CHUNK_BYTES)));
    const snaps = await db.getAll(...Array.from({ length: wanted }, (_, i) => chunks.doc(String(i))));
    found = snaps
      .filter((s) => s.exists)
      .map((s) => ({ index: Number(s.get('index')), bytes: s.get('bytes') as unknown }));
  }
  found.sort((a, b) => a.index - b.index);
  return Buffer.concat(found.map((c) => chunkBytes(c.bytes)));
}

/** The text view of a document's raw data ({@link rawTextOf} of its first bytes); null when it keeps none. */
export async function rawDataView(db: Firestore, id: string, stored: DocumentData): Promise<RawDataView | null> {
  if (!keepsRawData(stored)) return null;
  const head = (await rawBytes(db, id, stored, { limit: RAW_TEXT_BYTES })) ?? Buffer.alloc(0);
  const total = typeof stored.rawDataBytes === 'number' ? stored.rawDataBytes : head.length;
  return rawTextOf(head, total, typeof stored.rawDataForm === 'string' ? stored.rawDataForm : null);
}

/** A document's raw data as kept: the exact bytes, or why there are none. */
export type RawData =
  | { readonly kind: 'bytes'; readonly bytes: Buffer }
  | { readonly kind: 'no-document' }
  | { readonly kind: 'no-raw-data' };

/** The exact bytes the receiver kept of document `id` ({@link rawBytes}), as `inbox show --raw` writes them. */
export async function readRawData(deps: Pick<OperationsDeps, 'db'>, id: string): Promise<RawData> {
  const db = deps.db();
  const snap = await db.collection(INBOX).doc(id).get();
  if (!snap.exists) return { kind: 'no-document' };
  const bytes = await rawBytes(db, id, snap.data() ?? {});
  return bytes === null ? { kind: 'no-raw-data' } : { kind: 'bytes', bytes };
}
