/** How long {@link waitFor} keeps asking, and how often. */
export interface WaitOptions {
  /** Give up after this long; default 30 s (an emulator round trip on a busy 2-core machine can take seconds). */
  readonly timeoutMs?: number;
  /** The pause between two checks; default 50 ms. */
  readonly everyMs?: number;
}

/**
 * Asks `check` until it returns a value other than undefined and returns that
 * value: tests wait on conditions, never on fixed sleeps. A check that throws
 * counts as "not yet" (a client reconnecting after an outage throws for a
 * while); when time runs out, the error names `what` and the last error seen.
 * The one polling helper of the tests.
 */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined>,
  options: WaitOptions = {},
): Promise<T> {
  const { timeoutMs = 30_000, everyMs = 50 } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError: string | undefined;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = String(err);
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${lastError === undefined ? '' : `: ${lastError}`}`,
      );
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
