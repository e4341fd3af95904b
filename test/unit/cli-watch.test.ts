import { formatAge, parseDuration, parseKnownName, parsePageSize, parseTimerId, UsageError } from '../../functions/src/cli/parse';
import { comparePositions, formatCursor, mergePages, type PagePosition, parseCursor } from '../../functions/src/cli/waiting-page';

/** The pure part of `inbox waiting`, `inbox timers` and `inbox repair fire-timer`: flags, cursors, paging, ages. */

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

describe('--older-than durations', () => {
  test.each([
    ['3d', 3 * DAY],
    ['12h', 12 * HOUR],
    ['30m', 30 * MIN],
    ['90s', 90_000],
    [' 15d ', 15 * DAY],
    ['0m', 0],
  ])('%j is %d ms', (text, ms) => {
    expect(parseDuration('--older-than', text)).toBe(ms);
  });

  test.each(['3', 'd', '3w', '1.5d', '-3d', '3 d', 'P3D', '', '3D'])('%j is a usage error naming the flag', (text) => {
    expect(() => parseDuration('--older-than', text)).toThrow(UsageError);
    expect(() => parseDuration('--older-than', text)).toThrow(/^--older-than: expected a duration like 90s, 15m, 2h or 7d/);
  });
});

describe('--page-size', () => {
  test.each([['1', 1], ['50', 50], ['1000', 1000], [' 7 ', 7]])('%j', (text, n) => {
    expect(parsePageSize(text)).toBe(n);
  });
  test.each(['0', '1001', '-1', '2.5', 'ten', '', '1e2', '0x10'])('%j is refused', (text) => {
    expect(() => parsePageSize(text)).toThrow(/^--page-size: expected a whole number from 1 to 1000/);
  });
});

describe('--message', () => {
  const names = ['WorkOrderCompleted', 'WorkOrderCancelled'];
  test('any case, answered as the models spell it', () => {
    expect(parseKnownName('--message', ' workordercompleted ', names, 'the message names the deployed models wait for')).toBe('WorkOrderCompleted');
  });
  test('a name nobody waits for is refused, listing the names', () => {
    expect(() => parseKnownName('--message', 'InvoicePaid', names, 'the message names the deployed models wait for')).toThrow(
      '--message: expected one of WorkOrderCompleted, WorkOrderCancelled (the message names the deployed models wait for), got "InvoicePaid"',
    );
  });
  test('no names at all says so', () => {
    expect(() => parseKnownName('--message', 'X', [], 'w')).toThrow('expected one of (none) (w)');
  });
});

describe('TIMER_ID', () => {
  test('40 hex digits, any case', () => {
    expect(parseTimerId(` ${'AB'.repeat(20)} `)).toBe('ab'.repeat(20));
  });
  test.each(['', 'a'.repeat(39), 'a'.repeat(41), 'g'.repeat(40), `timers/${'a'.repeat(40)}`])('%j is refused', (text) => {
    expect(() => parseTimerId(text)).toThrow(/^TIMER_ID: expected a timer id, 40 hex digits/);
  });
});

describe('formatAge', () => {
  test.each([
    [0, '0 s'],
    [59_999, '59 s'],
    [MIN, '1 min'],
    [HOUR, '1 h'],
    [5 * HOUR + 12 * MIN, '5 h 12 min'],
    [DAY, '1 d'],
    [16 * DAY + 3 * HOUR + 59 * MIN, '16 d 3 h'],
    [-2 * HOUR, 'in 2 h'],
  ])('%d ms: %s', (ms, text) => {
    expect(formatAge(ms)).toBe(text);
  });
});

describe('cursors', () => {
  const at: PagePosition = { seconds: 1_764_000_000, nanoseconds: 123_000_000, id: 'c'.repeat(40) };

  test('round trip, and safe on a command line', () => {
    const text = formatCursor(at);
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(parseCursor(text)).toEqual(at);
  });

  const encode = (value: unknown): string => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
  test.each([
    ['empty', ''],
    ['not base64url', 'a+b/c='],
    ['not JSON', Buffer.from('nope').toString('base64url')],
    ['an object', encode({ seconds: 1, nanoseconds: 0, id: 'x' })],
    ['two items', encode([1, 0])],
    ['fractional seconds', encode([1.5, 0, 'x'])],
    ['nanoseconds out of range', encode([1, 1_000_000_000, 'x'])],
    ['beyond year 9999', encode([253_402_300_800, 0, 'x'])],
    ['an empty id', encode([1, 0, ''])],
    ['a path for an id', encode([1, 0, 'a/b'])],
    ['an id over 1,500 bytes', encode([1, 0, 'x'.repeat(1_501)])],
  ])('%s is a usage error naming --after', (_what, text) => {
    expect(() => parseCursor(text)).toThrow(UsageError);
    expect(() => parseCursor(text)).toThrow(/^--after: expected the cursor a previous page printed/);
  });

  test('order: createdAt, then nanoseconds, then the document id', () => {
    const p = (seconds: number, nanoseconds: number, id: string): PagePosition => ({ seconds, nanoseconds, id });
    const sorted = [p(2, 0, 'a'), p(1, 5, 'a'), p(1, 0, 'b'), p(1, 0, 'a')].sort(comparePositions);
    expect(sorted).toEqual([p(1, 0, 'a'), p(1, 0, 'b'), p(1, 5, 'a'), p(2, 0, 'a')]);
  });
});

describe('mergePages: one page from lists sorted per shard', () => {
  const item = (seconds: number, id: string): PagePosition => ({ seconds, nanoseconds: 0, id });
  const self = (p: PagePosition): PagePosition => p;

  test.each<[string, PagePosition[][], number, string[], PagePosition | null]>([
    ['all shards short: the whole merge, nothing follows', [[item(3, 'c')], [item(1, 'a'), item(4, 'd')], []], 5, ['a', 'c', 'd'], null],
    ['more than a page in total: the oldest, next after the last shown', [[item(3, 'c'), item(5, 'e')], [item(1, 'a'), item(4, 'd')]], 3, ['a', 'c', 'd'], item(4, 'd')],
    ['exactly a page, from one full shard: it may hold more', [[item(1, 'a'), item(2, 'b')], []], 2, ['a', 'b'], item(2, 'b')],
    ['exactly a page from short shards: nothing follows', [[item(1, 'a')], [item(2, 'b')]], 3, ['a', 'b'], null],
    ['ties on createdAt broken by id', [[item(1, 'b')], [item(1, 'a')]], 1, ['a'], item(1, 'a')],
    ['nothing anywhere', [[], []], 10, [], null],
  ])('%s', (_name, lists, size, ids, next) => {
    const page = mergePages(lists, size, self);
    expect(page.items.map((i) => i.id)).toEqual(ids);
    expect(page.next).toEqual(next);
  });
});
