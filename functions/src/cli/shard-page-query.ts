import { type Query, type QueryDocumentSnapshot, Timestamp } from '@google-cloud/firestore';
import { STATE_SHARDS } from '../engine/store/collections';
import type { PageCursor } from '../queries';
import { RefusedError } from './inbox-ops';
import { formatCursor, mergePages, type PagePosition, parseCursor, type ShardedOrder } from './shard-page';

/**
 * The Firestore side of paging across the shards (`inbox waiting`,
 * `inbox timers`); the order, the cursors and the merge are in shard-page.ts.
 */

/** Where a document stands in its list's order; refused for one whose field is no timestamp (edited by hand: Firestore sorts it apart from the rest). */
export function positionOf(order: ShardedOrder, snap: QueryDocumentSnapshot): PagePosition {
  const at: unknown = snap.get(order.field);
  if (!(at instanceof Timestamp)) {
    throw new RefusedError(`${order.collection}/${snap.id} has a ${order.field} that is not a timestamp (${JSON.stringify(at)}): it was edited by hand; set it to a timestamp`);
  }
  return { seconds: at.seconds, nanoseconds: at.nanoseconds, id: snap.id };
}

/** The `--after` of a command as its page queries start after it; null (the first page) without one; a UsageError for a cursor this list did not print. */
export function cursorOf(order: ShardedOrder, after: string | undefined): PageCursor | null {
  if (after === undefined) return null;
  const position = parseCursor(order, after);
  return { at: new Timestamp(position.seconds, position.nanoseconds), id: position.id };
}

/**
 * One page of a list that is queried once per shard: `queryOf(shard)` asks
 * one shard for at most `pageSize` items after the cursor, in the list's
 * order (16 queries, at most 16 × pageSize reads), merged here. `next` is
 * the cursor of the following page, null on the last.
 */
export async function pageAcrossShards(order: ShardedOrder, pageSize: number, queryOf: (shard: number) => Query): Promise<{ items: QueryDocumentSnapshot[]; next: string | null }> {
  const lists = await Promise.all(Array.from({ length: STATE_SHARDS }, async (_, shard) => (await queryOf(shard).get()).docs));
  const page = mergePages(lists, pageSize, (snap) => positionOf(order, snap));
  return { items: page.items, next: page.next === null ? null : formatCursor(order, page.next) };
}
