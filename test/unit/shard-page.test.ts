import fc from 'fast-check';
import { UsageError } from '../../functions/src/cli/parse';
import { cursorOf } from '../../functions/src/cli/shard-page-query';
import {
  comparePositions,
  formatCursor,
  mergePages,
  type PagePosition,
  parseCursor,
  type ShardedOrder,
  TIMERS_ORDER,
  WAITING_ORDER,
} from '../../functions/src/operations/shard-page';

/** The pure paging across shards of `inbox waiting` and `inbox timers`: positions, cursors, the merge of one page. */

const at = (seconds: number, id: string, nanoseconds = 0): PagePosition => ({ seconds, nanoseconds, id });

describe.each<[string, ShardedOrder]>([
  ['waiting', WAITING_ORDER],
  ['timers', TIMERS_ORDER],
])('cursors of `inbox %s`', (list, order) => {
  const position = at(1_764_000_000, 'c'.repeat(40), 123_000_000);

  test('round trip, and safe on a command line', () => {
    const text = formatCursor(order, position);
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(parseCursor(order, text)).toEqual(position);
  });

  const encode = (value: unknown): string => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
  test.each([
    ['empty', ''],
    ['not base64url', 'a+b/c='],
    ['not JSON', Buffer.from('nope').toString('base64url')],
    ['an object', encode({ list, seconds: 1, nanoseconds: 0, id: 'x' })],
    ['without its list (the form before timers were paged)', encode([1, 0, 'x'])],
    ['of an unknown list', encode(['list', 1, 0, 'x'])],
    ['fractional seconds', encode([list, 1.5, 0, 'x'])],
    ['nanoseconds out of range', encode([list, 1, 1_000_000_000, 'x'])],
    ['beyond year 9999', encode([list, 253_402_300_800, 0, 'x'])],
    ['an empty id', encode([list, 1, 0, ''])],
    ['a path for an id', encode([list, 1, 0, 'a/b'])],
    ['an id over 1,500 bytes', encode([list, 1, 0, 'x'.repeat(1_501)])],
  ])('%s is no cursor, and on the command line a usage error naming --after and the command', (_what, text) => {
    expect(parseCursor(order, text)).toBeNull();
    expect(() => cursorOf(order, text)).toThrow(UsageError);
    expect(() => cursorOf(order, text)).toThrow(
      new RegExp(`^--after: expected the cursor a previous page printed \\(a page of \`inbox ${list}\`\\), got `),
    );
  });
});

test("one list's cursor is refused by the other: its position means nothing there", () => {
  const position = at(1_764_000_000, 'c'.repeat(40));
  expect(parseCursor(TIMERS_ORDER, formatCursor(WAITING_ORDER, position))).toBeNull();
  expect(parseCursor(WAITING_ORDER, formatCursor(TIMERS_ORDER, position))).toBeNull();
  expect(() => cursorOf(TIMERS_ORDER, formatCursor(WAITING_ORDER, position))).toThrow(/a page of `inbox timers`/);
  expect(() => cursorOf(WAITING_ORDER, formatCursor(TIMERS_ORDER, position))).toThrow(/a page of `inbox waiting`/);
});

test('order: the timestamp, then nanoseconds, then the document id', () => {
  const sorted = [at(2, 'a'), at(1, 'a', 5), at(1, 'b'), at(1, 'a')].sort(comparePositions);
  expect(sorted).toEqual([at(1, 'a'), at(1, 'b'), at(1, 'a', 5), at(2, 'a')]);
});

describe('mergePages: one page from lists sorted per shard', () => {
  const self = (p: PagePosition): PagePosition => p;

  test.each<[string, PagePosition[][], number, string[], PagePosition | null]>([
    [
      'all shards short: the whole merge, nothing follows',
      [[at(3, 'c')], [at(1, 'a'), at(4, 'd')], []],
      5,
      ['a', 'c', 'd'],
      null,
    ],
    [
      'more than a page in total: the earliest, next after the last shown',
      [
        [at(3, 'c'), at(5, 'e')],
        [at(1, 'a'), at(4, 'd')],
      ],
      3,
      ['a', 'c', 'd'],
      at(4, 'd'),
    ],
    [
      'exactly a page, from one full shard: it may hold more',
      [[at(1, 'a'), at(2, 'b')], []],
      2,
      ['a', 'b'],
      at(2, 'b'),
    ],
    ['exactly a page from short shards: nothing follows', [[at(1, 'a')], [at(2, 'b')]], 3, ['a', 'b'], null],
    ['ties on the timestamp broken by id', [[at(1, 'b')], [at(1, 'a')]], 1, ['a'], at(1, 'a')],
    ['nothing anywhere', [[], []], 10, [], null],
  ])('%s', (_name, lists, size, ids, next) => {
    const page = mergePages(lists, size, self);
    expect(page.items.map((i) => i.id)).toEqual(ids);
    expect(page.next).toEqual(next);
  });
});

/**
 * The walk a command makes: each page asks every shard for at most `size`
 * items after the cursor (as Firestore's startAfter(timestamp, id) on an
 * index in (timestamp, id) order does), merges them, and hands the cursor
 * on as text.
 */
function walk(
  order: ShardedOrder,
  shards: readonly PagePosition[][],
  size: number,
): { pages: PagePosition[][]; guard: boolean } {
  const sortedShards = shards.map((s) => [...s].sort(comparePositions));
  const pages: PagePosition[][] = [];
  let cursor: string | null = null;
  for (let n = 0; n <= shards.flat().length + 1; n++) {
    const after: PagePosition | null = cursor === null ? null : parseCursor(order, cursor);
    if (cursor !== null && after === null) throw new Error(`a page handed on a cursor it cannot read: ${cursor}`);
    const lists = sortedShards.map((s) =>
      s.filter((p) => after === null || comparePositions(p, after) > 0).slice(0, size),
    );
    const page = mergePages(lists, size, (p: PagePosition) => p);
    pages.push(page.items);
    if (page.next === null) return { pages, guard: false };
    cursor = formatCursor(order, page.next);
  }
  return { pages, guard: true };
}

describe('walking the pages with the cursor each page hands on', () => {
  test('3 pages over 3 shards, equal due times at both page boundaries: every item once, in order', () => {
    const due = 1_764_000_000;
    const shards = [
      [at(due, 'a1'), at(due + 60, 'a2'), at(due + 120, 'a3')],
      [at(due, 'b1'), at(due + 60, 'b2'), at(due + 120, 'b3')],
      [at(due + 60, 'c1'), at(due + 120, 'c2')],
    ];
    const { pages, guard } = walk(TIMERS_ORDER, shards, 3);
    expect(guard).toBe(false);
    // Page 1 ends inside the run due at +60, page 2 inside the run due at +120.
    expect(pages.map((p) => p.map((i) => i.id))).toEqual([
      ['a1', 'b1', 'a2'],
      ['b2', 'c1', 'a3'],
      ['b3', 'c2'],
    ]);
  });

  test('property: for any shards and page size, the pages hold every item exactly once, in (timestamp, id) order', () => {
    const item = fc.record({
      seconds: fc.integer({ min: 0, max: 4 }),
      nanoseconds: fc.constantFrom(0, 500),
      id: fc.stringMatching(/^[a-f0-9]{1,3}$/),
    });
    const shards = fc
      .uniqueArray(item, { selector: (p) => p.id, maxLength: 40 })
      .chain((items) =>
        fc
          .array(fc.integer({ min: 0, max: 15 }), { minLength: items.length, maxLength: items.length })
          .map((shardOf) => Array.from({ length: 16 }, (_, s) => items.filter((_p, i) => shardOf[i] === s))),
      );
    fc.assert(
      fc.property(shards, fc.integer({ min: 1, max: 6 }), (lists, size) => {
        const { pages, guard } = walk(WAITING_ORDER, lists, size);
        expect(guard).toBe(false);
        expect(pages.flat()).toEqual(lists.flat().sort(comparePositions));
        expect(pages.slice(0, -1).every((p) => p.length === size)).toBe(true);
      }),
    );
  });
});
