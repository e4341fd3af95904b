import fc from 'fast-check';
import { backoffMs } from '../../functions/src/relay/backoff';

/**
 * Properties of the relay's backoff (functions/src/relay/backoff.ts). The
 * relay writes `now + backoffMs(...)` as a document's nextAttemptAt, so a
 * NaN, a negative or an above-cap value would either lose the document
 * (Invalid Date) or retry it far too late.
 */

const SEED = 20_261_129;
const RUNS = { seed: SEED, numRuns: 500 };

/** The documented step: min(cap, base * 2^(n-1)), with attempts below 1 treated as the first. */
const ceilingOf = (attempt: number, base: number, cap: number): number =>
  Math.min(cap, base * 2 ** Math.max(0, attempt - 1));

/** Policies as config.ts accepts them (positive integers), with the cap reachable within 2^30 steps (see the exponent clamp). */
const policy = fc
  .tuple(
    fc.integer({ min: 1, max: 1_000_000 }),
    fc.integer({ min: 0, max: 30 }),
    fc.integer({ min: 0, max: 1_000_000 }),
  )
  .map(([base, doublings, extra]) => ({ base, cap: Math.min(base * 2 ** doublings + extra, base * 2 ** 30) }));
const inUnit = fc.double({ min: 0, max: 1, noNaN: true });
/** Any double, NaN and ±Infinity included: random() is injected, so the function must not trust it. */
const anyRandom = fc.double();

describe('backoffMs', () => {
  test('lies in [ceiling/2, ceiling] of the documented step, is an integer and never exceeds the cap', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), policy, inUnit, (attempt, { base, cap }, random) => {
        const ms = backoffMs(attempt, base, cap, random);
        const ceiling = ceilingOf(attempt, base, cap);
        expect(Number.isInteger(ms)).toBe(true);
        // Math.round may lift ceiling/2 by half a millisecond, never below it.
        expect(ms).toBeGreaterThanOrEqual(ceiling / 2);
        expect(ms).toBeLessThanOrEqual(ceiling);
        expect(ms).toBeLessThanOrEqual(cap);
      }),
      RUNS,
    );
  });

  test('is at least 1 ms whenever base >= 1, so nextAttemptAt is always strictly after now', () => {
    fc.assert(
      fc.property(fc.integer({ min: -5, max: 100 }), policy, anyRandom, (attempt, { base, cap }, random) => {
        expect(backoffMs(attempt, base, cap, random)).toBeGreaterThanOrEqual(1);
      }),
      RUNS,
    );
  });

  test('never shrinks from one attempt to the next (same random draw)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), policy, inUnit, (attempt, { base, cap }, random) => {
        expect(backoffMs(attempt + 1, base, cap, random)).toBeGreaterThanOrEqual(backoffMs(attempt, base, cap, random));
      }),
      RUNS,
    );
  });

  test('huge attempt numbers (a document retried for months, or a corrupt counter) still give the capped step, not Infinity', () => {
    const huge = fc.oneof(
      fc.integer({ min: 31, max: Number.MAX_SAFE_INTEGER }),
      fc.constantFrom(Number.MAX_VALUE, Infinity),
    );
    fc.assert(
      fc.property(huge, policy, inUnit, (attempt, { base, cap }, random) => {
        const ms = backoffMs(attempt, base, cap, random);
        expect(Number.isFinite(ms)).toBe(true);
        // With the cap reachable within 2^30, a huge attempt sits at the cap step.
        expect(ms).toBe(backoffMs(31, base, cap, random));
        expect(ms).toBeGreaterThanOrEqual(cap / 2);
        expect(ms).toBeLessThanOrEqual(cap);
      }),
      RUNS,
    );
  });

  test('a random number outside [0, 1] (NaN, ±Infinity included) acts like the nearest end of [0, 1]', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), policy, anyRandom, (attempt, { base, cap }, random) => {
        const ms = backoffMs(attempt, base, cap, random);
        expect(Number.isFinite(ms)).toBe(true);
        if (random <= 0 || Number.isNaN(random)) expect(ms).toBe(backoffMs(attempt, base, cap, 0));
        if (random >= 1) expect(ms).toBe(backoffMs(attempt, base, cap, 1));
      }),
      RUNS,
    );
  });

  // Counterexamples the properties above found (kept as plain table tests):
  // a NaN random number or attempt count gave NaN ms, i.e. an Invalid Date as
  // nextAttemptAt, which Firestore refuses: the document could never be written.
  test.each([
    ['NaN random', 1, NaN, 500],
    ['NaN attempt (document without attempts)', NaN, 0.5, 750],
  ])('%s gives a finite delay', (_name, attempt, random, expected) => {
    expect(backoffMs(attempt, 1_000, 60_000, random)).toBe(expected);
  });
});
