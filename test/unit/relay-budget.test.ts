import { DEFAULTS } from '../../functions/src/config';
import { callBudget, STRAY_CAP_MS, strayWindowMs } from '../../functions/src/relay/budget';

/** A clock the test steps by hand. */
function steppedClock(start: number): { readonly clock: () => number; readonly to: (elapsed: number) => void } {
  let now = start;
  return { clock: () => now, to: (elapsed) => (now = start + elapsed) };
}

describe('the relay call budget: the stray-shard step gets a bounded share, the rounds the rest', () => {
  test('the stray window: a quarter of the budget, at most STRAY_CAP_MS', () => {
    expect(strayWindowMs(2_000)).toBe(500);
    expect(strayWindowMs(18_000)).toBe(4_500);
    expect(strayWindowMs(DEFAULTS.INBOX_RELAY_BUDGET_MS)).toBe(STRAY_CAP_MS);
    expect(strayWindowMs(600_000)).toBe(STRAY_CAP_MS);
  });

  test('stepped through a call of 18 s + 5 s: the strays stop at 4.5 s, the rounds start until 18 s and wait until 23 s', () => {
    const { clock, to } = steppedClock(1_000_000);
    const budget = callBudget(clock, 18_000, 5_000);
    expect([budget.strays.withinBudget(), budget.strays.timeLeftMs()]).toEqual([true, 4_500]);
    expect([budget.rounds.withinBudget(), budget.rounds.timeLeftMs()]).toEqual([true, 23_000]);

    to(4_499);
    expect([budget.strays.withinBudget(), budget.strays.timeLeftMs()]).toEqual([true, 1]);

    // The stray step has used its share (e.g. its query hung until its deadline): the candidate query still has the rest.
    to(4_500);
    expect([budget.strays.withinBudget(), budget.strays.timeLeftMs()]).toEqual([false, 0]);
    expect([budget.rounds.withinBudget(), budget.rounds.timeLeftMs()]).toEqual([true, 18_500]);
    expect(budget.elapsedMs()).toBe(4_500);

    to(18_000);
    expect([budget.rounds.withinBudget(), budget.rounds.timeLeftMs()]).toEqual([false, 5_000]);
    to(23_000);
    expect(budget.rounds.timeLeftMs()).toBe(0);
  });

  test.each([1, 2_000, 18_000, DEFAULTS.INBOX_RELAY_BUDGET_MS, 600_000])(
    'budget %i ms: once the strays had all their window, the rounds keep at least three quarters of it plus the grace',
    (budgetMs) => {
      const graceMs = DEFAULTS.INBOX_RELAY_GRACE_MS;
      const { clock, to } = steppedClock(0);
      const budget = callBudget(clock, budgetMs, graceMs);
      to(strayWindowMs(budgetMs));
      expect(budget.strays.withinBudget()).toBe(false);
      expect(budget.rounds.timeLeftMs()).toBeGreaterThanOrEqual(Math.ceil(budgetMs * 0.75) + graceMs);
    },
  );
});
