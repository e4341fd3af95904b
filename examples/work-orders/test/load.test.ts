import { runLoad } from '../load/run-load';

/**
 * The load run, short: 64 clients for 20 s against the receiver under the
 * Functions Framework CLI, the Firestore line cut once for 9 s (longer than
 * the receiver's 8 s write deadline, so the cut shows as 503s). The 60 s
 * figure with the RSS check is `npm run test:load` (docs/reliability.md);
 * the heap settles only after about 25 s, so RSS is not judged here.
 */
test('under load with an outage: only injected errors, every acknowledged message stored once', async () => {
  const result = await runLoad({
    concurrency: 64,
    durationMs: 20_000,
    warmupMs: 2_000,
    faultEveryMs: 10_000,
    faultMs: 9_000,
    redeliveryRatio: 0.05,
    progress: () => undefined,
  });
  // The whole result on failure: the figures say what went wrong.
  expect(result).toMatchObject({ unexpected: {}, faultWindows: 1, missing: 0, doubled: 0 });
  // The outage bit: requests failed with 503 while the line was cut, and were retried until stored.
  expect(result.injectedErrors).toBeGreaterThan(0);
  expect(result.messages).toBeGreaterThan(100);
  expect(result.redeliveries).toBeGreaterThan(0);
}, 90_000);
