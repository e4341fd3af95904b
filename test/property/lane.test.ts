import fc from 'fast-check';
import type { LaneEntry } from '../../functions/src/engine/store/collections';
import { compareLane, isOlder, oldestOf, olderThan } from '../../functions/src/relay/lane';

/**
 * Properties of the per-key order (functions/src/relay/lane.ts). The relay
 * holds a document back while the lane has an older OPEN one, and the buffer
 * hands a waiting point only the oldest: if `isOlder` were not a strict total
 * order, documents could each see another as older (a cycle) and wait
 * forever, or two relays could disagree on which goes first.
 */

const RUNS = { seed: 20_261_130, numRuns: 2_000 };
const T0 = Date.parse('2026-11-29T12:00:00Z');

/** Few distinct instants, so ties in publishTime and receivedAt, and present/missing mixes, are frequent. */
const instant = fc.integer({ min: 0, max: 4 }).map((s) => new Date(T0 + s * 1_000));
const entryArb: fc.Arbitrary<LaneEntry> = fc.record({
  inboxId: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'),
  messageName: fc.constant('M'),
  publishTime: fc.option(instant, { nil: null, freq: 3 }),
  receivedAt: instant,
});
/** A lane: distinct ids, as in Firestore (one entry per inbox document). */
const laneArb = (minLength: number): fc.Arbitrary<LaneEntry[]> =>
  fc.uniqueArray(entryArb, { minLength, maxLength: 6, selector: (e) => e.inboxId });

describe('per-key order is a strict total order', () => {
  test('irreflexive and asymmetric', () => {
    fc.assert(
      fc.property(laneArb(2), ([a, b]) => {
        if (a === undefined || b === undefined) return;
        expect(isOlder(a, a)).toBe(false);
        expect(isOlder(a, b) && isOlder(b, a)).toBe(false);
      }),
      RUNS,
    );
  });

  test('total: of two different documents one is older', () => {
    fc.assert(
      fc.property(laneArb(2), ([a, b]) => {
        if (a === undefined || b === undefined) return;
        expect(isOlder(a, b) || isOlder(b, a)).toBe(true);
        expect(Math.sign(compareLane(a, b))).toBe(-Math.sign(compareLane(b, a)));
      }),
      RUNS,
    );
  });

  test('transitive', () => {
    fc.assert(
      fc.property(laneArb(3), ([a, b, c]) => {
        if (a === undefined || b === undefined || c === undefined) return;
        if (isOlder(a, b) && isOlder(b, c)) expect(isOlder(a, c)).toBe(true);
      }),
      RUNS,
    );
  });

  test('every non-empty lane has exactly one document with nothing older, whatever the lane order', () => {
    fc.assert(
      fc.property(laneArb(1), fc.integer({ min: 0, max: 5 }), (lane, rotation) => {
        const heads = lane.filter((e) => olderThan(lane, e) === null);
        expect(heads).toHaveLength(1);
        const rotated = [...lane.slice(rotation % lane.length), ...lane.slice(0, rotation % lane.length)];
        expect(oldestOf(rotated)?.inboxId).toBe(heads[0]?.inboxId);
      }),
      RUNS,
    );
  });

  test('with publishTime on both sides: earlier publishTime, then receivedAt, then id (the documented rule)', () => {
    fc.assert(
      fc.property(laneArb(2), ([a, b]) => {
        if (a === undefined || b === undefined || a.publishTime === null || b.publishTime === null) return;
        const rule =
          a.publishTime.getTime() !== b.publishTime.getTime()
            ? a.publishTime < b.publishTime
            : a.receivedAt.getTime() !== b.receivedAt.getTime()
              ? a.receivedAt < b.receivedAt
              : a.inboxId < b.inboxId;
        expect(isOlder(a, b)).toBe(rule);
      }),
      RUNS,
    );
  });
});
