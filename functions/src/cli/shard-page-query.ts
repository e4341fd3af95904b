import { pageCursorOf } from '../operations/shard-page-query';
import type { ShardedOrder } from '../operations/shard-page';
import type { PageCursor } from '../queries';
import { UsageError } from './parse';

/** The `--after` of a command as its page queries start after it; null (the first page) without one; a UsageError for a cursor this list did not print. */
export function cursorOf(order: ShardedOrder, after: string | undefined): PageCursor | null {
  if (after === undefined) return null;
  const cursor = pageCursorOf(order, after);
  if (cursor === null)
    throw new UsageError(
      `--after: expected the cursor a previous page printed (a page of \`inbox ${order.list}\`), got ${JSON.stringify(after)}`,
    );
  return cursor;
}
