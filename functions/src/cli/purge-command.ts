import type { BulkWriterError, DocumentSnapshot, Firestore, GrpcStatus, QueryDocumentSnapshot } from '@google-cloud/firestore';
import { isTimestamp } from '../core/timestamp';
import { QUERIES } from '../queries';
import { type BulkOptions, confirmBulk } from './bulk';
import type { CliContext } from './context';
import { RefusedError } from './inbox-ops';
import { print } from './output';
import { parseTime, UsageError } from './parse';
import { pageProgress } from './progress';

/** DONE documents read per page: what purge holds in memory at a time. */
export const PURGE_PAGE_SIZE = 500;

/** gRPC FAILED_PRECONDITION: the document changed after its page was read (its update time no longer matches). */
const FAILED_PRECONDITION: GrpcStatus = 9;

export interface PurgeOptions {
  readonly dryRun: boolean;
  readonly pageSize?: number;
  /** Called with each page as read, before its deletes (progress; tests change a document here). */
  readonly onPage?: (page: readonly QueryDocumentSnapshot[], totals: PurgeResult) => void | Promise<void>;
}

export interface PurgeResult {
  /** DONE documents looked at. */
  readonly scanned: number;
  /** Of those, processed before the bound. */
  readonly matched: number;
  readonly deleted: number;
  /** Matched but changed between the read and the delete, so kept (a later purge looks again). */
  readonly changedSinceRead: number;
}

const processedBefore = (snap: DocumentSnapshot, before: Date): boolean => {
  const at: unknown = snap.get('processedAt');
  return isTimestamp(at) && at.toDate() < before;
};

/**
 * Deletes the DONE inbox documents processed before `before`, page by page in
 * id order (a page at a time in memory, whatever the inbox holds). Each
 * delete carries the update time it was read with, so a document that
 * changed since (a dead-letter event recorded on it, say) is kept, not
 * deleted unseen. Touches the `inbox` collection only: nothing else is ever
 * deleted here (records with their own TTL keep their own horizon).
 */
export async function purgeDone(db: Firestore, before: Date, options: PurgeOptions): Promise<PurgeResult> {
  const pageSize = options.pageSize ?? PURGE_PAGE_SIZE;
  let totals: PurgeResult = { scanned: 0, matched: 0, deleted: 0, changedSinceRead: 0 };
  let after: DocumentSnapshot | null = null;
  for (;;) {
    const page = await QUERIES.inboxList.build(db, { status: 'DONE' }, after, pageSize).get();
    if (page.empty) break;
    const matches = page.docs.filter((d) => processedBefore(d, before));
    totals = { ...totals, scanned: totals.scanned + page.size, matched: totals.matched + matches.length };
    await options.onPage?.(page.docs, totals);
    if (!options.dryRun && matches.length > 0) {
      const outcomes = await deleteUnchanged(db, matches);
      totals = { ...totals, deleted: totals.deleted + outcomes.deleted, changedSinceRead: totals.changedSinceRead + outcomes.changed };
    }
    if (page.size < pageSize) break;
    after = page.docs[page.docs.length - 1] ?? null;
  }
  return totals;
}

/** Deletes through the SDK's BulkWriter (batched, throttled), each delete guarded by the update time it was read with. */
async function deleteUnchanged(db: Firestore, docs: readonly QueryDocumentSnapshot[]): Promise<{ deleted: number; changed: number }> {
  const writer = db.bulkWriter();
  // A failed precondition is an answer, not a hiccup: no retry. Anything else: the writer's own retries.
  writer.onWriteError((err) => err.code !== FAILED_PRECONDITION && err.failedAttempts < 5);
  let deleted = 0;
  let changed = 0;
  const failures: BulkWriterError[] = [];
  const ops = docs.map((d) =>
    writer.delete(d.ref, { lastUpdateTime: d.updateTime }).then(
      () => {
        deleted += 1;
      },
      // The SDK rejects a write of the BulkWriter with a BulkWriterError.
      (err: BulkWriterError) => {
        if (err.code === FAILED_PRECONDITION) changed += 1;
        else failures.push(err);
      },
    ),
  );
  await writer.close();
  await Promise.all(ops);
  if (failures[0] !== undefined) throw failures[0];
  return { deleted, changed };
}

/**
 * The youngest bound purge accepts without --force: now minus the DONE
 * retention. A DONE document younger than that is the dedup record of a
 * message Pub/Sub may still redeliver (the subscription keeps messages for
 * the same 7 days); deleting it would let the redelivery in as a new message.
 */
export function checkBound(before: Date, now: Date, retentionMs: number, force: boolean, text: string): void {
  if (force || before.getTime() <= now.getTime() - retentionMs) return;
  const days = Math.round(retentionMs / 86_400_000);
  throw new UsageError(
    `--done-before ${text} would delete DONE documents processed within the last ${days} d (INBOX_DONE_RETENTION_DAYS): they are the dedup records of messages Pub/Sub may still redeliver; use --done-before ${days}d or earlier, or add --force if you mean it`,
  );
}

/** `inbox purge`: for the emulator, where TTL deletion does not run, and for a manual clean-up. */
export async function purge(ctx: CliContext, options: BulkOptions & { doneBefore?: string; force?: boolean }): Promise<void> {
  if (options.doneBefore === undefined) throw new UsageError('purge needs --done-before TIME');
  const now = ctx.now();
  const before = parseTime('--done-before', options.doneBefore, now);
  checkBound(before, now, ctx.config.relay.retentionMs, options.force === true, options.doneBefore);
  const db = ctx.db();
  const dryRun = options.dryRun === true;
  const total = (await QUERIES.byStatus.build(db, 'DONE').count().get()).data().count;
  // Asked once, up front, with what is known then: how many DONE documents will be looked at.
  if (!dryRun && !(await confirmBulk(ctx, `Delete the DONE documents processed before ${before.toISOString()}, out of`, total, options))) throw new RefusedError('not confirmed');
  const bar = pageProgress(ctx, total, '{bar} {value}/{total} DONE documents read, {deleted} deleted', { deleted: 0 });
  let result: PurgeResult;
  try {
    result = await purgeDone(db, before, { dryRun, onPage: (page, totals) => bar.advance(page.length, { deleted: totals.deleted }) });
  } finally {
    bar.stop();
  }
  if (dryRun) {
    print(ctx, { wouldDelete: result.matched, scanned: result.scanned }, ['would delete', 'DONE documents read'], [[result.matched, result.scanned]]);
    return;
  }
  print(ctx, result, ['deleted', 'kept (changed since read)', 'DONE documents read'], [[result.deleted, result.changedSinceRead, result.scanned]]);
  if (!ctx.json) ctx.io.out(`deleted ${result.deleted} of ${result.matched} DONE documents processed before ${before.toISOString()}`);
}
