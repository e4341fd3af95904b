import type { Firestore } from '@google-cloud/firestore';
import { errorCode, withDeadline } from '../core/errors';
import { shardOf } from '../inbox/ids';
import { QUERIES } from '../queries';

/** gRPC NOT_FOUND: the document went (purged) between the query and the update. */
const GRPC_NOT_FOUND = 5;

/** Documents per page of the stray-shard query. */
export const RESHARD_PAGE = 200;

export interface ReshardOptions {
  /** Whether the step may start another page. */
  readonly withinBudget: () => boolean;
  /** How long the step may still run, ms: the deadline of each page's query and of its moves. */
  readonly timeLeftMs: () => number;
  readonly pageSize?: number;
}

/** What moving stray documents did. */
export interface Resharded {
  /** Documents moved into `0..shards-1`. */
  readonly moved: number;
  /** Document reads billed for the stray-shard queries (at least one per query). */
  readonly reads: number;
}

/**
 * Moves OPEN documents whose stored `shard` is `shards` or more into range
 * (`shardOf(id, shards)`, what a receiver with this count writes). A shard
 * is fixed when the receiver stores a document, from the INBOX_SHARDS it
 * runs with; after the count is lowered, or while a receiver of a rolling
 * deploy runs with more shards than the relay, such documents are in no
 * shard the relay queries: never candidates, invisible to the oldest-OPEN
 * gauge, and holding back every younger document of their key. The
 * scheduled relay calls this first, page by page within its share of the
 * call's budget (budget.ts; the next call goes on), so a change of the
 * count needs no migration and strands nothing.
 *
 * The update touches `shard` alone, outside any transaction: a relay
 * transaction that read the document meanwhile is retried by Firestore
 * (the document changed under it) and reads the new shard; a document that
 * was finished meanwhile just gets the new shard too, which changes
 * nothing. One query per call when there is nothing to move (one read).
 */
export async function reshardStrays(db: Firestore, shards: number, options: ReshardOptions): Promise<Resharded> {
  const pageSize = options.pageSize ?? RESHARD_PAGE;
  let moved = 0;
  let reads = 0;
  while (options.withinBudget()) {
    const page = await withDeadline('the stray-shard query', options.timeLeftMs(), () =>
      QUERIES.strayShards.build(db, shards, pageSize).get(),
    );
    reads += Math.max(1, page.size);
    await withDeadline('moving stray documents into range', options.timeLeftMs(), () =>
      Promise.all(
        page.docs.map(async (d) => {
          try {
            await d.ref.update({ shard: shardOf(d.id, shards) });
            moved += 1;
          } catch (err) {
            if (errorCode(err) !== GRPC_NOT_FOUND) throw err;
          }
        }),
      ),
    );
    if (page.size < pageSize) break;
  }
  return { moved, reads };
}
