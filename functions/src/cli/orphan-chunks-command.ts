import type { DocumentReference, Firestore, QueryDocumentSnapshot } from '@google-cloud/firestore';
import { GRPC_FAILED_PRECONDITION } from '../core/errors';
import { INBOX } from '../inbox/document';
import { QUERIES } from '../queries';
import type { CliContext } from './context';
import { ORPHAN_MIN_AGE_MS, parseOrphanMinAge } from './orphan-payloads-command';
import { print } from './output';
import { formatAge } from './parse';

/**
 * `inbox repair orphan-chunks [--dry-run] [--older-than DURATION]`:
 * `rawChunks` documents whose inbox document is gone. Deleting a document
 * leaves its subcollection behind, so anything that deleted a chunked
 * document alone left them: a delete by hand, or the TTL policy on
 * `expireAt`, which a dismissed unreadable message carried before dismissed
 * chunked documents went to the payload sweep (which deletes chunks and
 * document together, as `inbox purge` does). Nothing else lists them.
 * They are found with a collection-group query over `rawChunks` (document
 * names only, never their bytes), listed by inbox id and, unless --dry-run,
 * deleted.
 *
 * A receipt writes the chunks before the document, and a message retried
 * through a Firestore outage keeps its chunks without a document until a
 * redelivery writes them again and creates it: so, as for orphan payloads,
 * only chunks last written longer ago than any delivery of their message
 * are looked at (32 days by default, past Pub/Sub's 31-day retention;
 * --older-than lowers it, never below an hour). A document's chunks are
 * deleted in one transaction that finds the document still absent, each
 * chunk on the update time it was listed with: a delivery that rewrote a
 * chunk or created the document meanwhile keeps them all.
 */

/** Chunks listed per page (names only). */
const LIST_PAGE = 500;

/** What became of one gone document's chunks. */
export type OrphanChunksOutcome = 'DELETED' | 'CHANGED' | 'DOCUMENT_BACK';

export interface OrphanChunks {
  readonly inboxId: string;
  /** Its chunks found (a document whose chunks straddle two pages is listed once per page). */
  readonly chunks: number;
  /** When the last of them was written. */
  readonly lastWrittenAt: string;
  /** DELETED; CHANGED: a chunk was written again after it was listed (a delivery is storing the message), all kept; DOCUMENT_BACK: the document exists again, all kept; null in a dry run. */
  readonly outcome: OrphanChunksOutcome | null;
}

export interface OrphanChunkScan {
  /** rawChunks documents listed. */
  readonly listed: number;
  /** The minimum age used (ms): chunks written more recently are not looked at. */
  readonly minAgeMs: number;
  /** Chunks of documents with a chunk written within minAgeMs: not looked at. */
  readonly young: number;
  /** Chunks not under a document of the `inbox` collection: left alone (not written by the inbox). */
  readonly unrecognised: number;
  readonly orphans: readonly OrphanChunks[];
  readonly dryRun: boolean;
}

/** The inbox document a chunk belongs to, or null when it is not under `inbox/{id}`. */
function inboxDocOf(chunk: QueryDocumentSnapshot): DocumentReference | null {
  const doc = chunk.ref.parent.parent;
  return doc !== null && doc.parent.path === INBOX ? doc : null;
}

/** Deletes one gone document's chunks, if it is still gone and none of them changed since listed. */
async function deleteOrphans(
  db: Firestore,
  doc: DocumentReference,
  chunks: readonly QueryDocumentSnapshot[],
): Promise<OrphanChunksOutcome> {
  try {
    return await db.runTransaction(async (tx) => {
      if ((await tx.get(doc)).exists) return 'DOCUMENT_BACK' as const;
      for (const chunk of chunks) tx.delete(chunk.ref, { lastUpdateTime: chunk.updateTime });
      return 'DELETED' as const;
    });
  } catch (err) {
    if ((err as { code?: unknown }).code === GRPC_FAILED_PRECONDITION) return 'CHANGED';
    throw err;
  }
}

/** Lists the chunks whose inbox document is gone, last written more than `minAgeMs` ago, and, unless `dryRun`, deletes them. */
export async function scanOrphanChunks(
  db: Firestore,
  now: Date,
  dryRun: boolean,
  minAgeMs: number = ORPHAN_MIN_AGE_MS,
): Promise<OrphanChunkScan> {
  let listed = 0;
  let young = 0;
  let unrecognised = 0;
  const orphans: OrphanChunks[] = [];
  let after: QueryDocumentSnapshot | null = null;
  for (;;) {
    const page = await QUERIES.allRawChunks.build(db, after, LIST_PAGE).get();
    listed += page.size;
    // Paths order a document's chunks together: group them by document.
    const groups = new Map<string, { doc: DocumentReference; chunks: QueryDocumentSnapshot[] }>();
    for (const chunk of page.docs) {
      const doc = inboxDocOf(chunk);
      if (doc === null) {
        unrecognised += 1;
        continue;
      }
      const group = groups.get(doc.path) ?? { doc, chunks: [] };
      group.chunks.push(chunk);
      groups.set(doc.path, group);
    }
    const old = [...groups.values()].filter((g) => {
      const fresh = g.chunks.some((c) => now.getTime() - c.updateTime.toMillis() < minAgeMs);
      if (fresh) young += g.chunks.length;
      return !fresh;
    });
    const docs = old.length === 0 ? [] : await db.getAll(...old.map((g) => g.doc), { fieldMask: ['status'] });
    const gone = old.filter((_, i) => docs[i]?.exists === false);
    for (const g of gone) {
      const lastWrittenAt = new Date(Math.max(...g.chunks.map((c) => c.updateTime.toMillis()))).toISOString();
      orphans.push({
        inboxId: g.doc.id,
        chunks: g.chunks.length,
        lastWrittenAt,
        outcome: dryRun ? null : await deleteOrphans(db, g.doc, g.chunks),
      });
    }
    if (page.size < LIST_PAGE) break;
    after = page.docs[page.docs.length - 1] ?? null;
  }
  return { listed, minAgeMs, young, unrecognised, orphans, dryRun };
}

const OUTCOME_TEXT: Readonly<Record<OrphanChunksOutcome, string>> = {
  DELETED: 'deleted',
  CHANGED: 'kept: a chunk was written again (a delivery is storing the message)',
  DOCUMENT_BACK: 'kept: its document exists again',
};

/** `inbox repair orphan-chunks`: deletes rawChunks whose inbox document is gone (scanOrphanChunks), or with --dry-run lists them by inbox id. */
export async function orphanChunksCommand(
  ctx: CliContext,
  options: { readonly dryRun?: boolean; readonly olderThan?: string },
): Promise<void> {
  const dryRun = options.dryRun === true;
  const minAgeMs = parseOrphanMinAge(options.olderThan, 'its chunks');
  const scan = await scanOrphanChunks(ctx.db(), ctx.now(), dryRun, minAgeMs);
  print(
    ctx,
    scan,
    ['inbox id (gone)', 'chunks', 'last written', dryRun ? 'would be' : 'now'],
    scan.orphans.map((o) => [
      o.inboxId,
      o.chunks,
      o.lastWrittenAt,
      o.outcome === null ? 'deleted' : OUTCOME_TEXT[o.outcome],
    ]),
  );
  if (ctx.json) return;
  const taken = scan.orphans.filter((o) => o.outcome === null || o.outcome === 'DELETED');
  const chunks = taken.reduce((n, o) => n + o.chunks, 0);
  ctx.io.out(
    `rawChunks: ${scan.listed} chunk(s) listed, ${scan.young} written within ${formatAge(minAgeMs)} left alone (a delivery of its message may still write its document), ` +
      `${scan.unrecognised} outside inbox/ left alone; ${dryRun ? 'would delete' : 'deleted'} ${chunks} chunk(s) of ${taken.length} gone document(s)${dryRun ? ' (dry run: nothing changed)' : ''}`,
  );
}
