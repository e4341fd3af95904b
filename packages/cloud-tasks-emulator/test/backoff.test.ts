import { DEFAULT_RETRY_POLICY, retryDelayMs, shouldGiveUp, type RetryPolicy } from '../src/backoff';

const policy = (p: Partial<RetryPolicy>): RetryPolicy => ({ ...DEFAULT_RETRY_POLICY, ...p });

describe('retryDelayMs', () => {
  // The example of the RetryConfig.max_doublings documentation: 10 s min,
  // 300 s max, 3 doublings → retries after 10, 20, 40, 80, 160, 240, 300, 300 s.
  const documented = policy({ minBackoffMs: 10_000, maxBackoffMs: 300_000, maxDoublings: 3 });
  it.each([
    [1, 10_000],
    [2, 20_000],
    [3, 40_000],
    [4, 80_000],
    [5, 160_000],
    [6, 240_000],
    [7, 300_000],
    [8, 300_000],
    [50, 300_000],
  ])('documented example: after failure %i wait %i ms', (failures, expected) => {
    expect(retryDelayMs(documented, failures)).toBe(expected);
  });

  // Defaults (0.1 s, 3600 s, 16 doublings): 0.1, 0.2, 0.4, ... doubling for a long time.
  it.each([
    [1, 100],
    [2, 200],
    [3, 400],
    [10, 51_200],
    [16, 3_276_800],
    [17, 3_600_000],
    [100, 3_600_000],
  ])('default policy: after failure %i wait %i ms', (failures, expected) => {
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, failures)).toBe(expected);
  });

  it.each([
    // no doublings: linear growth by minBackoff
    [policy({ minBackoffMs: 1000, maxBackoffMs: 10_000, maxDoublings: 0 }), [1000, 2000, 3000, 4000]],
    // min = max: constant
    [policy({ minBackoffMs: 5000, maxBackoffMs: 5000, maxDoublings: 16 }), [5000, 5000, 5000, 5000]],
    // one doubling, then linear steps of 2·min
    [policy({ minBackoffMs: 100, maxBackoffMs: 1000, maxDoublings: 1 }), [100, 200, 400, 600]],
  ])('%o gives %o', (p, expected) => {
    expect(expected.map((_, i) => retryDelayMs(p, i + 1))).toEqual(expected);
  });

  it('never exceeds maxBackoff, even for huge attempt counts', () => {
    expect(retryDelayMs(policy({ maxDoublings: 10_000 }), 5000)).toBe(3_600_000);
  });

  it('rejects a non-positive failure count', () => {
    expect(() => retryDelayMs(DEFAULT_RETRY_POLICY, 0)).toThrow(RangeError);
  });
});

describe('shouldGiveUp', () => {
  const t0 = 1_000_000;
  it.each<[string, Partial<RetryPolicy>, number, number, boolean]>([
    ['attempts left', { maxAttempts: 3 }, 2, 0, false],
    ['attempts used up, no age limit', { maxAttempts: 3 }, 3, 0, true],
    ['unlimited attempts and age', { maxAttempts: -1, maxRetryDurationMs: 0 }, 10_000, 10 ** 9, false],
    ['unlimited attempts, age reached', { maxAttempts: -1, maxRetryDurationMs: 60_000 }, 5, 60_000, true],
    ['unlimited attempts, age not reached', { maxAttempts: -1, maxRetryDurationMs: 60_000 }, 5, 59_999, false],
    ['both limits: only attempts reached', { maxAttempts: 3, maxRetryDurationMs: 60_000 }, 3, 1000, false],
    ['both limits: only age reached', { maxAttempts: 3, maxRetryDurationMs: 60_000 }, 2, 60_000, false],
    ['both limits reached', { maxAttempts: 3, maxRetryDurationMs: 60_000 }, 3, 60_000, true],
    ['single attempt', { maxAttempts: 1 }, 1, 0, true],
  ])('%s', (_, p, attempts, age, expected) => {
    expect(shouldGiveUp(policy(p), attempts, t0, t0 + age)).toBe(expected);
  });
});
