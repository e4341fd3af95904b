import { DEFAULTS } from '../../functions/src/config';
import { STORAGE_POLICY, uploadTimeoutMs } from '../../functions/src/storage/gcs-payload-store';

/**
 * The deployed storage policy against the receiver's deadline: the receiver
 * offloads a large report before it acks, so the slowest create it can make
 * (two answered 5xx, the backoffs between them, then a timeout) must end
 * before INBOX_WRITE_TIMEOUT_MS, while a large upload still gets the time
 * its bytes need.
 */
test('an upload gets time for its bytes: 10 MiB gets more than 2 KiB, and 2 KiB about the request timeout', () => {
  const small = uploadTimeoutMs(STORAGE_POLICY, 2 * 1024);
  const large = uploadTimeoutMs(STORAGE_POLICY, DEFAULTS.INBOX_MAX_DATA_BYTES);
  expect(small).toBeLessThan(STORAGE_POLICY.requestTimeoutMs + 10);
  expect(large - STORAGE_POLICY.requestTimeoutMs).toBe(
    Math.ceil((DEFAULTS.INBOX_MAX_DATA_BYTES * 1000) / STORAGE_POLICY.uploadBytesPerSecond),
  );
  expect(large).toBeGreaterThanOrEqual(2 * STORAGE_POLICY.requestTimeoutMs);
});

test('the slowest create of the largest report still ends within the receiver deadline', () => {
  let backoffs = 0;
  let delay = 1;
  for (let retry = 0; retry < STORAGE_POLICY.maxRetries; retry++) {
    backoffs += Math.min(delay, STORAGE_POLICY.maxRetryDelaySeconds) * 1000;
    delay *= STORAGE_POLICY.retryDelayMultiplier;
  }
  const worst = backoffs + uploadTimeoutMs(STORAGE_POLICY, DEFAULTS.INBOX_MAX_DATA_BYTES);
  expect(worst).toBeLessThan(DEFAULTS.INBOX_WRITE_TIMEOUT_MS);
});
