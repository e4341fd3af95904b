import type { Firestore } from '@google-cloud/firestore';
import { errorCode } from '../core/errors';
import { shardOf, STATE_SHARDS } from '../engine/store/collections';
import { QUERIES } from '../queries';
import type { CliContext } from './context';
import { print } from './output';

/** gRPC NOT_FOUND: the waiting point went (its token moved on) between the page and the update. */
const GRPC_NOT_FOUND = 5;

/** Waiting points read per page. */
export const SHARD_PAGE = 500;

/** What one run did. */
export interface ShardedSubscriptions {
  /** Waiting points read (every one, once). */
  readonly scanned: number;
  /** Given a shard now (with --dry-run: would be). */
  readonly sharded: number;
  /** Gone between the read and the update: nothing left to shard. */
  readonly gone: number;
}

const hasShard = (value: unknown): boolean => typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < STATE_SHARDS;

/**
 * Gives every waiting point stored before eventSubscriptions carried `shard`
 * its shard (`shardOf(id)`, what the engine writes now), so the waiting
 * gauge and `inbox waiting` see it. A one-off after deploying the version
 * that added the field, run by the operator, not by the relay: Firestore
 * indexes only documents that have a field, so no query finds the ones
 * without it, and the only way is to read the whole collection once. The
 * relay would have to repeat that scan or keep a cursor, and during a
 * rolling deploy old instances still write points without a shard after
 * such a scan; run after the deploy has finished, one pass finds them all.
 * Idempotent: a second run finds nothing to do. The update touches `shard`
 * alone (outside any transaction: a correlation that read the point
 * meanwhile runs again and reads it with its shard).
 */
export async function shardSubscriptions(db: Firestore, dryRun: boolean, pageSize = SHARD_PAGE): Promise<ShardedSubscriptions> {
  let scanned = 0;
  let sharded = 0;
  let gone = 0;
  let after: string | null = null;
  for (;;) {
    const page = await QUERIES.allSubscriptions.build(db, after, pageSize).get();
    scanned += page.size;
    const missing = page.docs.filter((d) => !hasShard(d.get('shard')));
    await Promise.all(
      missing.map(async (d) => {
        const shard = shardOf(d.id);
        if (dryRun) {
          sharded += 1;
          return;
        }
        try {
          await d.ref.update({ shard });
          sharded += 1;
        } catch (err) {
          if (errorCode(err) !== GRPC_NOT_FOUND) throw err;
          gone += 1;
        }
      }),
    );
    if (page.size < pageSize) break;
    after = page.docs[page.docs.length - 1]?.id ?? null;
  }
  return { scanned, sharded, gone };
}

/** `inbox repair shard-subscriptions [--dry-run]`. */
export async function shardSubscriptionsCommand(ctx: CliContext, options: { dryRun?: boolean }): Promise<void> {
  const dryRun = options.dryRun === true;
  const done = await shardSubscriptions(ctx.db(), dryRun);
  print(ctx, { ...done, dryRun }, ['waiting points read', dryRun ? 'would get a shard' : 'given a shard', 'gone meanwhile'], [[done.scanned, done.sharded, done.gone]]);
}
