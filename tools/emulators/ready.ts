/**
 * True if `GET http://host/` answers 200 within `timeoutMs` (default 1000).
 * Both emulators answer their root path with `200 Ok` once they serve.
 */
export async function answers(host: string, timeoutMs = 1000): Promise<boolean> {
  try {
    const res = await fetch(`http://${host}/`, { signal: AbortSignal.timeout(timeoutMs) });
    // Drain the body so the connection is released instead of lingering.
    await res.arrayBuffer();
    return res.status === 200;
  } catch {
    return false;
  }
}

/** Result of {@link waitFor}. */
export type WaitOutcome<T> =
  { readonly kind: 'ready' } | { readonly kind: 'timeout' } | { readonly kind: 'aborted'; readonly reason: T };

/** Options for {@link waitFor}. */
export interface WaitForOptions<T> {
  /** Give up after this long. */
  readonly timeoutMs: number;
  /** Pause between attempts. Default 100. */
  readonly pollMs?: number;
  /** Called before each attempt; a defined result ends the wait as 'aborted'. */
  readonly abortIf?: () => T | undefined;
}

/**
 * Polls `host` until it answers (see {@link answers}), `abortIf` returns
 * something, or the timeout passes — whichever comes first. No fixed sleeps:
 * the wait ends on the first successful answer.
 */
export async function waitFor<T>(host: string, opts: WaitForOptions<T>): Promise<WaitOutcome<T>> {
  const { timeoutMs, pollMs = 100, abortIf } = opts;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const reason = abortIf?.();
    if (reason !== undefined) return { kind: 'aborted', reason };
    const left = deadline - Date.now();
    if (left <= 0) return { kind: 'timeout' };
    if (await answers(host, Math.min(1000, left))) return { kind: 'ready' };
    await new Promise<void>((resolve) => setTimeout(resolve, Math.min(pollMs, Math.max(0, deadline - Date.now()))));
  }
}
