import type { Firestore } from '@google-cloud/firestore';
import { INBOX } from '../inbox/document';
import { OFFLOAD_PREFIX } from '../inbox/claim-check';
import { offloadedObject } from '../jobs/sweep-payloads';
import { QUERIES } from '../queries';
import type { ListedObject, PayloadStore } from '../storage/payload-store';
import type { CliContext } from './context';
import { print } from './output';
import { createdAtOfGeneration } from './claim-view';

/**
 * `inbox repair orphan-payloads [--dry-run]`: objects under `payloads/` in
 * the payload bucket that no inbox document points to: its document was
 * deleted by hand (or by anything but the payload sweep and `inbox purge`,
 * which delete the object first), or the document it is named after points
 * to another object or generation. They are listed and, unless --dry-run,
 * deleted (pinned to the generation listed). An object younger than
 * ORPHAN_MIN_AGE_MS is left alone: a receipt in flight creates the object
 * before its document (issue 17, decision 3), so a young object without a
 * document is usually one whose document is a moment away.
 */

/** Objects younger than this are never taken for orphans (1 hour). */
export const ORPHAN_MIN_AGE_MS = 3_600_000;
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
  /** Younger than ORPHAN_MIN_AGE_MS: not looked at. */
  readonly young: number;
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

/** Why `o` has no document pointing to it, or null when one does: the document named by its id first, then any (a KEY_COLLISION's second payload). */
async function orphanWhy(db: Firestore, bucket: string, o: ListedObject, inboxId: string): Promise<OrphanWhy | null> {
  const named = await db.collection(INBOX).doc(inboxId).get();
  if (named.exists && pointsTo(named.get('offloaded'), bucket, o)) return null;
  const others = await QUERIES.inboxByOffloadedObject.build(db, o.object, 10).get();
  if (others.docs.some((d) => pointsTo(d.get('offloaded'), bucket, o))) return null;
  return named.exists ? 'POINTS_ELSEWHERE' : 'DOCUMENT_MISSING';
}

/** Lists the orphans of `bucket` and, unless `dryRun`, deletes them. */
export async function scanOrphanPayloads(db: Firestore, store: PayloadStore, bucket: string, now: Date, dryRun: boolean): Promise<OrphanScan> {
  let listed = 0;
  let young = 0;
  let unrecognised = 0;
  const orphans: Orphan[] = [];
  let token: string | null = null;
  do {
    const page = await store.list(bucket, OFFLOAD_PREFIX, token, LIST_PAGE);
    token = page.nextPageToken;
    for (const o of page.objects) {
      listed += 1;
      const created = createdAtOfGeneration(o.generation);
      if (created === null || now.getTime() - created.getTime() < ORPHAN_MIN_AGE_MS) {
        young += 1;
        continue;
      }
      const inboxId = NAME.exec(o.object)?.[1];
      if (inboxId === undefined) {
        unrecognised += 1;
        continue;
      }
      const why = await orphanWhy(db, bucket, o, inboxId);
      if (why === null) continue;
      const outcome = dryRun ? null : await store.delete({ bucket, object: o.object, generation: o.generation });
      orphans.push({ object: o.object, generation: o.generation, bytes: o.bytes, inboxId, why, outcome });
    }
  } while (token !== null);
  return { bucket, listed, young, unrecognised, orphans, dryRun };
}

const WHY_TEXT: Readonly<Record<OrphanWhy, string>> = { DOCUMENT_MISSING: 'its inbox document is gone', POINTS_ELSEWHERE: 'its inbox document points to another object or generation' };

export async function orphanPayloadsCommand(ctx: CliContext, options: { readonly dryRun?: boolean }): Promise<void> {
  const dryRun = options.dryRun === true;
  const bucket = ctx.config.claims.payloadBucket;
  const scan = await scanOrphanPayloads(ctx.db(), ctx.runtime.payloadStore(), bucket, ctx.now(), dryRun);
  print(ctx, scan, ['object', 'generation', 'bytes', 'why', dryRun ? 'would be' : 'now'], scan.orphans.map((o) => [o.object, o.generation, o.bytes, WHY_TEXT[o.why], o.outcome ?? 'deleted']));
  if (ctx.json) return;
  const verb = dryRun ? 'would delete' : 'deleted';
  ctx.io.out(
    `gs://${bucket}/${OFFLOAD_PREFIX}: ${scan.listed} object(s) listed, ${scan.young} younger than 1 h left alone (a receipt may still be writing its document), ${scan.unrecognised} with another name left alone; ${verb} ${scan.orphans.length} orphan(s)${dryRun ? ' (dry run: nothing changed)' : ''}`,
  );
}
