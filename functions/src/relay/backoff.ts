/**
 * Exponential backoff with jitter: attempt n (1-based) waits between half and
 * all of min(cap, base * 2^(n-1)). The jitter spreads retries of documents
 * that failed together (an outage) so they do not return together. Pure: the
 * random number comes in.
 */
export function backoffMs(attempt: number, baseMs: number, capMs: number, random: number): number {
  // NaN passes Math.min/Math.max unchanged and would become an Invalid Date
  // nextAttemptAt (which Firestore refuses): a NaN attempt counts as the
  // first, a NaN random as 0.
  const exponent = Number.isNaN(attempt) ? 0 : Math.max(0, Math.min(attempt - 1, 30));
  const ceiling = Math.min(capMs, baseMs * 2 ** exponent);
  const jitter = Number.isNaN(random) ? 0 : Math.min(Math.max(random, 0), 1);
  return Math.round(ceiling * (0.5 + 0.5 * jitter));
}
