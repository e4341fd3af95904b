import { type Query, type QueryDocumentSnapshot, Timestamp } from '@google-cloud/firestore';
import { STATE_SHARDS } from '../engine/store/collections';
import type { PageCursor } from '../queries';
import { RefusedError } from './refused';
import { formatCursor, mergePages, type PagePosition, parseCursor, type ShardedOrder } from './shard-page';

/**
 * The Firestore side of paging across the shards (`inbox waiting`,
 * `inbox timers`, the console's waiting list); the order, the cursors and
 * the merge are in shard-page.ts.
 */

/** Where a document stands in its list's order; refused for one whose field is no timestamp (edited by hand: Firestore sorts it apart from the rest). */
export function positionOf(order: ShardedOrder, snap: QueryDocumentSnapshot): PagePosition {
  const at: unknown = snap.get(order.field);
  if (!(at instanceof Timestamp)) {
    throw new RefusedError(
      `${order.collection}/${snap.id} has a ${order.field} that is not a timestamp (${JSON.stringify(at)}): it was edited by hand; set it to a timestamp`,
    );
  }
  return { seconds: at.seconds, nanoseconds: at.nanoseconds, id: snap.id };
}

/** A cursor a previous page of this list gave, as its page queries start after it; null for text no page of this list gave. */
export function pageCursorOf(order: ShardedOrder, text: string): PageCursor | null {
  const position = parseCursor(order, text);
  return position === null ? null : { at: new Timestamp(position.seconds, position.nanoseconds), id: position.id };
}

/**
 * One page of a list that is queried once per shard: `queryOf(shard)` asks
 * one shard for at most `pageSize` items after the cursor, in the list's
 * order (16 queries, at most 16 × pageSize reads), merged here. `next` is
 * the cursor of the following page, null on the last.
 */
export async function pageAcrossShards(
  order: ShardedOrder,
  pageSize: number,
  queryOf: (shard: number) => Query,
): Promise<{ items: QueryDocumentSnapshot[]; next: string | null }> {
  const lists = await Promise.all(
    Array.from({ length: STATE_SHARDS }, async (_, shard) => (await queryOf(shard).get()).docs),
  );
  const page = mergePages(lists, pageSize, (snap) => positionOf(order, snap));
  return { items: page.items, next: page.next === null ? null : formatCursor(order, page.next) };
}
