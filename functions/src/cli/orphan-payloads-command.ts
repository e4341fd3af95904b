import type { Firestore } from '@google-cloud/firestore';
import { INBOX } from '../inbox/document';
import { inChunksWithoutOffload, OFFLOAD_PREFIX, offloadedObject } from '../inbox/claim-check';
import { QUERIES } from '../queries';
import type { ListedObject, PayloadStore } from '../storage/payload-store';
import type { CliContext } from './context';
import { print } from './output';
import { formatAge, parseDuration, UsageError } from './parse';

/**
 * `inbox repair orphan-payloads [--dry-run] [--older-than DURATION]`:
 * objects under `payloads/` in the payload bucket that no inbox document
 * points to: its document was deleted by hand (or by anything but the
 * payload sweep and `inbox purge`, which delete the object first), or the
 * document it is named after points to another object or generation. They
 * are listed and, unless --dry-run, deleted (pinned to the generation
 * listed).
 *
 * Only objects older than any delivery of their message are looked at. The
 * receiver creates the object before its document (issue 17, decision 3),
 * and a message retried during a Firestore outage keeps its object without
 * a document for as long as Pub/Sub redelivers it; the redelivery's create
 * answers 412, reuses that generation and writes the document. Deleting the
 * object in between would leave an OPEN document whose payload is gone.
 * Pub/Sub keeps an unacked message at most 31 days (its dead-letter
 * subscription too), so the default is 32 days; --older-than lowers it for
 * an operator who knows no delivery is pending, never below an hour.
 *
 * An object whose named document still keeps its payload in chunks and has
 * no `offloaded` is skipped too: `inbox requeue` offloads such a payload
 * before its transaction records it (operations/offload-chunked.ts), so the object
 * is one a requeue is about to adopt.
 */

/** Objects younger than this are never taken for orphans by default: 32 days, past Pub/Sub's longest retention (31 days). */
export const ORPHAN_MIN_AGE_MS = 32 * 86_400_000;
/** The least --older-than: a receipt in flight is seconds, a retried one can be much longer. */
export const ORPHAN_MIN_AGE_FLOOR_MS = 3_600_000;
/** Objects listed per page. */
const LIST_PAGE = 500;

/** Why an object is an orphan. */
export type OrphanWhy = 'DOCUMENT_MISSING' | 'POINTS_ELSEWHERE';

export interface Orphan {
  readonly object: string;
  readonly generation: string;
  readonly bytes: number;
  readonly inboxId: string;
  readonly why: OrphanWhy;
  /** DELETED or ABSENT (gone meanwhile) after a real run; null in a dry run. */
  readonly outcome: 'DELETED' | 'ABSENT' | null;
}

export interface OrphanScan {
  readonly bucket: string;
  /** Objects listed under payloads/. */
  readonly listed: number;
  /** The minimum age used (ms): younger objects are not looked at. */
  readonly minAgeMs: number;
  /** Younger than minAgeMs: not looked at. */
  readonly young: number;
  /** Named after a document whose payload is still in chunks, without `offloaded`: a requeue's, left alone. */
  readonly requeuePending: number;
  /** Names not of the form payloads/<inbox id>/<sha256>.json: left alone (not written by the receiver). */
  readonly unrecognised: number;
  readonly orphans: readonly Orphan[];
  readonly dryRun: boolean;
}

const NAME = /^payloads\/([0-9a-f]{40})\/([0-9a-f]{64})\.json$/;

/** Whether an inbox document's `offloaded` is this very object and generation of `bucket`. */
const pointsTo = (offloaded: unknown, bucket: string, o: ListedObject): boolean => {
  const ref = offloadedObject(offloaded);
  return ref !== null && ref.bucket === bucket && ref.object === o.object && ref.generation === o.generation;
};

/**
 * Why `o` has no document pointing to it; REFERENCED when one does (the
 * document named by its id first, then any: a KEY_COLLISION's second
 * payload); REQUEUE_PENDING when the named document is a chunked one.
 */
async function orphanWhy(
  db: Firestore,
  bucket: string,
  o: ListedObject,
  inboxId: string,
): Promise<OrphanWhy | 'REFERENCED' | 'REQUEUE_PENDING'> {
  const named = await db.collection(INBOX).doc(inboxId).get();
  if (named.exists && pointsTo(named.get('offloaded'), bucket, o)) return 'REFERENCED';
  const others = await QUERIES.inboxByOffloadedObject.build(db, o.object, 10).get();
  if (others.docs.some((d) => pointsTo(d.get('offloaded'), bucket, o))) return 'REFERENCED';
  // Its payload still in chunks with no reference: `inbox requeue` may be offloading it now.
  if (named.exists && inChunksWithoutOffload(named.data() ?? {})) return 'REQUEUE_PENDING';
  return named.exists ? 'POINTS_ELSEWHERE' : 'DOCUMENT_MISSING';
}

/** Lists the orphans of `bucket` older than `minAgeMs` and, unless `dryRun`, deletes them. */
export async function scanOrphanPayloads(
  db: Firestore,
  store: PayloadStore,
  bucket: string,
  now: Date,
  dryRun: boolean,
  minAgeMs: number = ORPHAN_MIN_AGE_MS,
): Promise<OrphanScan> {
  let listed = 0;
  let young = 0;
  let requeuePending = 0;
  let unrecognised = 0;
  const orphans: Orphan[] = [];
  let token: string | null = null;
  do {
    const page = await store.list(bucket, OFFLOAD_PREFIX, token, LIST_PAGE);
    token = page.nextPageToken;
    for (const o of page.objects) {
      listed += 1;
      if (now.getTime() - o.created.getTime() < minAgeMs) {
        young += 1;
        continue;
      }
      const inboxId = NAME.exec(o.object)?.[1];
      if (inboxId === undefined) {
        unrecognised += 1;
        continue;
      }
      const why = await orphanWhy(db, bucket, o, inboxId);
      if (why === 'REFERENCED') continue;
      if (why === 'REQUEUE_PENDING') {
        requeuePending += 1;
        continue;
      }
      const outcome = dryRun ? null : await store.delete({ bucket, object: o.object, generation: o.generation });
      orphans.push({ object: o.object, generation: o.generation, bytes: o.bytes, inboxId, why, outcome });
    }
  } while (token !== null);
  return { bucket, minAgeMs, listed, young, requeuePending, unrecognised, orphans, dryRun };
}

/** --older-than: a duration (parse.ts), at least ORPHAN_MIN_AGE_FLOOR_MS; absent, ORPHAN_MIN_AGE_MS. `what`: what a receipt writes before its document. */
export function parseOrphanMinAge(text: string | undefined, what = 'its object'): number {
  if (text === undefined) return ORPHAN_MIN_AGE_MS;
  const ms = parseDuration('--older-than', text);
  if (ms < ORPHAN_MIN_AGE_FLOOR_MS) {
    throw new UsageError(
      `--older-than: at least 1h (a receipt writes ${what} before its document, and a retried one can take much longer), got ${JSON.stringify(text)}`,
    );
  }
  return ms;
}

const WHY_TEXT: Readonly<Record<OrphanWhy, string>> = {
  DOCUMENT_MISSING: 'its inbox document is gone',
  POINTS_ELSEWHERE: 'its inbox document points to another object or generation',
};

/** `inbox repair orphan-payloads`: deletes the orphaned objects under payloads/ (scanOrphanPayloads), or with --dry-run lists them. */
export async function orphanPayloadsCommand(
  ctx: CliContext,
  options: { readonly dryRun?: boolean; readonly olderThan?: string },
): Promise<void> {
  const dryRun = options.dryRun === true;
  const minAgeMs = parseOrphanMinAge(options.olderThan);
  const bucket = ctx.config.claims.payloadBucket;
  const scan = await scanOrphanPayloads(ctx.db(), ctx.runtime.payloadStore(), bucket, ctx.now(), dryRun, minAgeMs);
  print(
    ctx,
    scan,
    ['object', 'generation', 'bytes', 'why', dryRun ? 'would be' : 'now'],
    scan.orphans.map((o) => [o.object, o.generation, o.bytes, WHY_TEXT[o.why], o.outcome ?? 'deleted']),
  );
  if (ctx.json) return;
  const verb = dryRun ? 'would delete' : 'deleted';
  ctx.io.out(
    `gs://${bucket}/${OFFLOAD_PREFIX}: ${scan.listed} object(s) listed, ${scan.young} younger than ${formatAge(minAgeMs)} left alone (a delivery of its message may still write its document), ` +
      `${scan.requeuePending} of a chunked document a requeue may adopt left alone, ${scan.unrecognised} with another name left alone; ${verb} ${scan.orphans.length} orphan(s)${dryRun ? ' (dry run: nothing changed)' : ''}`,
  );
}
