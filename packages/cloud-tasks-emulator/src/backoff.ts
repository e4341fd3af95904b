/**
 * Cloud Tasks' retry schedule, as pure functions (no clock, no state).
 *
 * Source: the `RetryConfig` documentation in google/cloud/tasks/v2/queue.proto
 * and https://cloud.google.com/tasks/docs/reference/rest/v2/RetryConfig:
 * "A task's retry interval starts at min_backoff, then doubles max_doublings
 * times, then increases linearly, and finally retries at intervals of
 * max_backoff up to max_attempts times." With min 10 s, max 300 s and 3
 * doublings the retries come 10, 20, 40, 80, 160, 240, 300, 300, ... seconds
 * after each failure.
 */

/** A queue's `RetryConfig` with defaults applied, durations in milliseconds. */
export interface RetryPolicy {
  /** Attempts per task including the first; -1 = unlimited. */
  readonly maxAttempts: number;
  /** Age limit measured from the first attempt; 0 = unlimited. */
  readonly maxRetryDurationMs: number;
  readonly minBackoffMs: number;
  readonly maxBackoffMs: number;
  readonly maxDoublings: number;
}

/**
 * What Cloud Tasks picks for a queue created through the API without a
 * `retryConfig` (what `gcloud tasks queues describe` shows for a fresh queue).
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 100,
  maxRetryDurationMs: 0,
  minBackoffMs: 100,
  maxBackoffMs: 3_600_000,
  maxDoublings: 16,
};

/**
 * The delay between the `failedAttempts`-th failed attempt (1-based) and the
 * next attempt.
 *
 * Retry i (0-based) waits min·2^i while i ≤ maxDoublings; after that the
 * interval grows linearly by the last doubled step, min·2^maxDoublings; and
 * it never exceeds maxBackoff.
 */
export function retryDelayMs(policy: RetryPolicy, failedAttempts: number): number {
  if (!Number.isInteger(failedAttempts) || failedAttempts < 1) {
    throw new RangeError(`failedAttempts must be a positive integer, got ${failedAttempts}`);
  }
  const i = failedAttempts - 1;
  const doublings = Math.max(0, policy.maxDoublings);
  // Exponents stay small in practice; cap them so 2^i cannot overflow to Infinity·0 = NaN.
  const step = policy.minBackoffMs * 2 ** Math.min(i, doublings, 1000);
  const delay = i <= doublings ? step : step * (i - doublings + 1);
  return Math.min(policy.maxBackoffMs, delay);
}

/**
 * Whether a task that just failed its `attempts`-th attempt is deleted
 * instead of retried.
 *
 * Cloud Tasks stops only when every configured limit is reached ("when the
 * task has been attempted max_attempts times *and* when the
 * max_retry_duration time has passed"). An unlimited limit (-1 attempts, 0
 * duration) does not hold the task back when the other one is configured;
 * with both unlimited the task is retried until its retention ends (which the
 * emulator does not model: it retries forever).
 */
export function shouldGiveUp(policy: RetryPolicy, attempts: number, firstAttemptMs: number, nowMs: number): boolean {
  const attemptsLimited = policy.maxAttempts !== -1;
  const ageLimited = policy.maxRetryDurationMs > 0;
  if (!attemptsLimited && !ageLimited) return false;
  const attemptsDone = !attemptsLimited || attempts >= policy.maxAttempts;
  const ageDone = !ageLimited || nowMs - firstAttemptMs >= policy.maxRetryDurationMs;
  return attemptsDone && ageDone;
}
