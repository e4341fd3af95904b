/**
 * The time of one scheduled relay call, split between its two steps. Pure:
 * the clock is passed in.
 *
 * The stray-shard step (reshard.ts) comes first and gets a bounded share,
 * so that a Firestore that hangs cannot spend the whole call on it: the
 * candidate query still runs with the rest, fails in its turn, and the call
 * answers 503 instead of an empty 200 that looks like an idle inbox.
 */

/** The stray-shard step's share of the budget. */
export const STRAY_SHARE = 0.25;

/** The most the stray-shard step may take, ms, whatever the budget. */
export const STRAY_CAP_MS = 10_000;

/** One step's time: whether it may start more work, and how long what it starts may be waited for. */
export interface StepWindow {
  /** Whether the step may start another piece of work (a page, a round, a document). */
  readonly withinBudget: () => boolean;
  /** How long the step may still wait, ms: the deadline of what it starts (0 or less: none left). */
  readonly timeLeftMs: () => number;
}

/** The windows of one call, all measured from its start. */
export interface CallBudget {
  /** The stray-shard step: until `strayWindowMs(budgetMs)`, no grace (an unfinished page is moved by the next call). */
  readonly strays: StepWindow;
  /** The rounds: documents start until `budgetMs`; transactions and candidate queries are waited for until budget + grace. */
  readonly rounds: StepWindow;
  /** Milliseconds since the call started. */
  readonly elapsedMs: () => number;
}

/** How long the stray-shard step may take in a call with this budget, ms: {@link STRAY_SHARE} of it, at most {@link STRAY_CAP_MS}. */
export function strayWindowMs(budgetMs: number): number {
  return Math.min(Math.floor(budgetMs * STRAY_SHARE), STRAY_CAP_MS);
}

/** The windows of a call that starts now by `clock`, with this budget and grace (ms). */
export function callBudget(clock: () => number, budgetMs: number, graceMs: number): CallBudget {
  const started = clock();
  const elapsedMs = (): number => clock() - started;
  const strayMs = strayWindowMs(budgetMs);
  return {
    strays: { withinBudget: () => elapsedMs() < strayMs, timeLeftMs: () => strayMs - elapsedMs() },
    rounds: { withinBudget: () => elapsedMs() < budgetMs, timeLeftMs: () => budgetMs + graceMs - elapsedMs() },
    elapsedMs,
  };
}
