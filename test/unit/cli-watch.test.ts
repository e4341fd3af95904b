import {
  formatAge,
  parseDuration,
  parseKnownName,
  parsePageSize,
  parseTimerId,
  UsageError,
} from '../../functions/src/cli/parse';

/** The pure part of `inbox waiting`, `inbox timers` and `inbox repair fire-timer`: flags and ages (paging: shard-page.test.ts). */

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
    expect(() => parseDuration('--older-than', text)).toThrow(
      /^--older-than: expected a duration like 90s, 15m, 2h or 7d/,
    );
  });
});

describe('--page-size', () => {
  test.each([
    ['1', 1],
    ['50', 50],
    ['1000', 1000],
    [' 7 ', 7],
  ])('%j', (text, n) => {
    expect(parsePageSize(text)).toBe(n);
  });
  test.each(['0', '1001', '-1', '2.5', 'ten', '', '1e2', '0x10'])('%j is refused', (text) => {
    expect(() => parsePageSize(text)).toThrow(/^--page-size: expected a whole number from 1 to 1000/);
  });
  test('the refusal names the flag it came with (`inbox timers --limit`, the older name)', () => {
    expect(() => parsePageSize('0', 1_000, '--limit')).toThrow(
      /^--limit: expected a whole number from 1 to 1000, got "0"$/,
    );
  });
});

describe('--message', () => {
  const names = ['TaskCompleted', 'TaskCancelled'];
  test('any case, answered as the models spell it', () => {
    expect(
      parseKnownName('--message', ' taskcompleted ', names, 'the message names the deployed models wait for'),
    ).toBe('TaskCompleted');
  });
  test('a name nobody waits for is refused, listing the names', () => {
    expect(() =>
      parseKnownName('--message', 'PaymentReceived', names, 'the message names the deployed models wait for'),
    ).toThrow(
      '--message: expected one of TaskCompleted, TaskCancelled (the message names the deployed models wait for), got "PaymentReceived"',
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
  test.each(['', 'a'.repeat(39), 'a'.repeat(41), 'g'.repeat(40), `timers/${'a'.repeat(40)}`])(
    '%j is refused',
    (text) => {
      expect(() => parseTimerId(text)).toThrow(/^TIMER_ID: expected a timer id, 40 hex digits/);
    },
  );
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
