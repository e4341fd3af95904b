/**
 * Paging of lists that are queried once per shard and shown in one order
 * across the shards (`inbox waiting`, `inbox timers`, the console's list of
 * waiting tokens): the pure part, without Firestore.
 */

/** A list the CLI pages across the shards: sorted by one timestamp field, earliest first, the document id breaking ties. */
export interface ShardedOrder {
  /** The command after `inbox`, named when a cursor is refused; it also tags the cursor, so one list refuses another's. */
  readonly list: string;
  /** The collection, named when a document cannot be placed. */
  readonly collection: string;
  /** The timestamp field the list is sorted by. */
  readonly field: string;
}

/** `inbox waiting`: key documents with waiting points, the oldest point first (their points are listed with them). */
export const WAITING_ORDER: ShardedOrder = { list: 'waiting', collection: 'correlationKeys', field: 'waitingSince' };
/** `inbox timers`: PENDING timers, soonest due first. */
export const TIMERS_ORDER: ShardedOrder = { list: 'timers', collection: 'timers', field: 'dueAt' };

/** A place in (timestamp field, document id) order: the last item of a page, where the next page starts after. */
export interface PagePosition {
  /** The timestamp as Firestore stores it: whole seconds since the epoch and the nanoseconds within that second. */
  readonly seconds: number;
  readonly nanoseconds: number;
  readonly id: string;
}

/** The position in (timestamp, id) order: earlier first, the document id breaking ties as Firestore orders it. */
export function comparePositions(a: PagePosition, b: PagePosition): number {
  if (a.seconds !== b.seconds) return a.seconds - b.seconds;
  if (a.nanoseconds !== b.nanoseconds) return a.nanoseconds - b.nanoseconds;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The text `--after` takes: opaque to the operator, safe on a command line (base64url of a JSON list: the list's name, then the position). */
export function formatCursor(order: ShardedOrder, position: PagePosition): string {
  return Buffer.from(
    JSON.stringify([order.list, position.seconds, position.nanoseconds, position.id]),
    'utf8',
  ).toString('base64url');
}

const isWhole = (v: unknown, min: number, max: number): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

/**
 * The position a cursor of this list holds, or null for anything else (text
 * that no page printed, another list's cursor: its position means nothing
 * here). Each face words the refusal its own way (the CLI names --after).
 */
export function parseCursor(order: ShardedOrder, text: string): PagePosition | null {
  if (!/^[A-Za-z0-9_-]{1,2800}$/.test(text.trim())) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text.trim(), 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(value) || value.length !== 4) return null;
  const [list, seconds, nanoseconds, id] = value as unknown[];
  if (list !== order.list) return null;
  // Firestore's timestamp range (years 1 to 9999) and a document id (1 to 1,500 bytes, no slash).
  if (!isWhole(seconds, -62_135_596_800, 253_402_300_799) || !isWhole(nanoseconds, 0, 999_999_999)) return null;
  if (typeof id !== 'string' || id === '' || id.includes('/') || Buffer.byteLength(id, 'utf8') > 1_500) return null;
  return { seconds, nanoseconds, id };
}

/**
 * One page from lists that are each sorted by position and were each asked
 * for at most `size` items (one per shard): the first `size` of them merged,
 * and where the next page starts, or null when nothing can follow. More can
 * follow when the merge had more than `size`, or when a list came back full
 * (its shard may hold more behind it).
 */
export function mergePages<T>(
  lists: ReadonlyArray<readonly T[]>,
  size: number,
  positionOf: (item: T) => PagePosition,
): { items: T[]; next: PagePosition | null } {
  const merged = lists.flat().sort((a, b) => comparePositions(positionOf(a), positionOf(b)));
  const items = merged.slice(0, size);
  const last = items[items.length - 1];
  const more = merged.length > size || lists.some((l) => l.length >= size);
  return { items, next: more && last !== undefined ? positionOf(last) : null };
}
