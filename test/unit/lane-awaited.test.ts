import fc from 'fast-check';
import type { LaneEntry } from '../../functions/src/engine/store/collections';
import { awaitedNames, holdsBack, olderThan, type StartFacts } from '../../functions/src/relay/lane';

/**
 * The lane rule for messages a token waits for: such a message is not held
 * behind an older one that no token waits for (it could only wait in the
 * buffer), while messages tokens wait for keep their order among themselves.
 */
const at = (s: number): Date => new Date(Date.parse('2026-12-01T10:00:00Z') + s * 1_000);
const entry = (inboxId: string, messageName: string, s: number): LaneEntry => ({
  inboxId,
  messageName,
  publishTime: at(s),
  receivedAt: at(s),
});

describe('holdsBack with the key waiting points', () => {
  const extra = entry('x', 'DocumentsSent', 1);
  const decision = entry('d', 'ReviewDecided', 5);
  const otherAwaited = entry('o', 'Reminder', 2);
  const table: Array<[string, LaneEntry, LaneEntry, readonly string[], boolean]> = [
    ['awaited, behind an older one nobody waits for: not held', extra, decision, ['ReviewDecided'], false],
    [
      'awaited, behind an older awaited one (an event-based gateway waits for both): held, in order',
      extra,
      decision,
      ['ReviewDecided', 'DocumentsSent'],
      true,
    ],
    ['nobody waits for it: every older one holds it (per-key order)', extra, decision, [], true],
    ['nobody waits for it, an older awaited one holds it', otherAwaited, decision, ['Reminder'], true],
    ['nobody waits for it nor for the older one: held', extra, decision, ['Reminder'], true],
  ];
  test.each(table)('%s', (_name, older, self, waiting, expected) => {
    expect(holdsBack(older, self, null, awaitedNames(waiting.map((messageName) => ({ messageName }))))).toBe(expected);
  });

  test('a start message that will start keeps its own rule whatever else is awaited', () => {
    const willStart: StartFacts = { awaited: false, instanceExists: false };
    const start = entry('s', 'Submitted', 9);
    expect(holdsBack(extra, start, willStart, new Set(['DocumentsSent']))).toBe(false);
    expect(holdsBack(entry('s0', 'Submitted', 0), start, willStart, new Set(['DocumentsSent']))).toBe(true);
  });

  test('in any lane: the oldest awaited message is held back by nobody, and an awaited one only by an older awaited one', () => {
    const names = ['A', 'B', 'C', 'D'];
    const laneArb = fc.uniqueArray(
      fc.record({
        inboxId: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f'),
        messageName: fc.constantFrom(...names),
        s: fc.integer({ min: 0, max: 4 }),
      }),
      { minLength: 1, maxLength: 6, selector: (e) => e.inboxId },
    );
    fc.assert(
      fc.property(laneArb, fc.subarray(names), (raw, waiting) => {
        const awaited = new Set(waiting);
        const lane = raw.map((e) => entry(e.inboxId, e.messageName, e.s));
        const awaitedOnes = lane.filter((e) => awaited.has(e.messageName));
        for (const self of awaitedOnes) {
          const blocker = olderThan(
            lane.filter((e) => holdsBack(e, self, null, awaited)),
            self,
          );
          if (blocker !== null) expect(awaited.has(blocker.messageName)).toBe(true);
          if (olderThan(awaitedOnes, self) === null) expect(blocker).toBeNull();
          // The order among awaited ones is kept: an older awaited one always holds it.
          expect(blocker).toEqual(olderThan(awaitedOnes, self));
        }
      }),
      { seed: 20_261_203, numRuns: 1_000 },
    );
  });
});
