import fc from 'fast-check';
import type { LaneEntry } from '../../functions/src/engine/store/collections';
import { decide, type RelayOutcome, type RelayPolicy } from '../../functions/src/relay/decide';
import { holdsBack, olderThan, type StartFacts } from '../../functions/src/relay/lane';

/** The pure rules of message starts in the relay: the decision on a start's outcome, and which older documents hold a start message back. */
const policy: RelayPolicy = {
  backoffBaseMs: 1_000,
  backoffCapMs: 60_000,
  bufferWindowMs: 24 * 3_600_000,
  errorAfterAttempts: 3,
};
const now = new Date('2026-12-01T12:00:00Z');
const doc = { attempts: 0, receivedAt: new Date(now.getTime() - 60_000), requeuedAt: null };

describe('decide: the outcomes of a start message', () => {
  const table: Array<[string, RelayOutcome, Record<string, unknown>]> = [
    [
      'started: DONE into the new instance',
      { kind: 'STARTED', processInstanceId: 'i-1' },
      { kind: 'DONE', processInstanceId: 'i-1' },
    ],
    [
      'the instance exists: PARKED ALREADY_STARTED at once, the instance in the details',
      { kind: 'ALREADY_STARTED', processInstanceId: 'i-1', processKey: 'fixture-opening', instanceStatus: 'RUNNING' },
      {
        kind: 'PARK',
        reason: 'ALREADY_STARTED',
        attempts: 1,
        lastError:
          'a start message, but process fixture-opening already has an instance for this key: i-1 (RUNNING); starting a second one is refused',
        details: { processInstanceId: 'i-1', processKey: 'fixture-opening', instanceStatus: 'RUNNING' },
      },
    ],
    [
      "variables the process cannot start with: PARKED START_REFUSED at once, with the door check's words",
      { kind: 'START_REFUSED', processKey: 'p', activityId: 'released', problem: 'variables.orderId is required' },
      {
        kind: 'PARK',
        reason: 'START_REFUSED',
        attempts: 1,
        lastError: 'would start process p at released, but variables.orderId is required',
        details: { processKey: 'p', activityId: 'released', problem: 'variables.orderId is required' },
      },
    ],
  ];
  test.each(table)('%s', (_name, outcome, expected) => {
    expect(decide(outcome, doc, policy, now, 0.5)).toEqual(expected);
  });

  test('a park of a start is final on the first attempt, however young the message (a business matter, not retried)', () => {
    const young = { attempts: 0, receivedAt: now, requeuedAt: null };
    expect(
      decide(
        { kind: 'ALREADY_STARTED', processInstanceId: 'i', processKey: 'p', instanceStatus: 'COMPLETED' },
        young,
        policy,
        now,
        0.5,
      ).kind,
    ).toBe('PARK');
  });
});

const at = (s: number): Date => new Date(Date.parse('2026-12-01T10:00:00Z') + s * 1_000);
/** No token of the key waits for anything (the lane rule for awaited messages: lane-awaited.test.ts). */
const NONE: ReadonlySet<string> = new Set();
const entry = (inboxId: string, messageName: string, s: number): LaneEntry => ({
  inboxId,
  messageName,
  publishTime: at(s),
  receivedAt: at(s),
});

describe('holdsBack: which older OPEN document holds a document back', () => {
  const release = entry('r', 'TaskOpened', 10);
  const completion = entry('c', 'TaskCompleted', 5);
  const olderRelease = entry('r0', 'TaskOpened', 1);
  const willStart: StartFacts = { awaited: false, instanceExists: false };
  const table: Array<[string, LaneEntry, LaneEntry, StartFacts | null, boolean]> = [
    ['a message whose name starts nothing: every older one (per-key order)', completion, release, null, true],
    ['the same, an older one of its own name', olderRelease, release, null, true],
    [
      'a start message that will start: not an older completion (it waits for the instance this start creates)',
      completion,
      release,
      willStart,
      false,
    ],
    [
      'a start message that will start: an older start message of its name goes first',
      olderRelease,
      release,
      willStart,
      true,
    ],
    [
      'a start message a token waits for: correlated like any message, in order',
      completion,
      release,
      { awaited: true, instanceExists: false },
      true,
    ],
    [
      'a start message whose instance exists: it will be parked, still in order',
      completion,
      release,
      { awaited: false, instanceExists: true },
      true,
    ],
    [
      'a start message awaited and its instance there',
      completion,
      release,
      { awaited: true, instanceExists: true },
      true,
    ],
  ];
  test.each(table)('%s', (_name, older, self, start, expected) => {
    expect(holdsBack(older, self, start, NONE)).toBe(expected);
  });

  test('the overtaken start: lane [completion, release]; the release is not held, the completion stays first for the buffer', () => {
    const lane = [completion, release];
    expect(
      olderThan(
        lane.filter((e) => holdsBack(e, release, willStart, NONE)),
        release,
      ),
    ).toBeNull();
    // Without a message start (the process started by startProcess) the order holds as before.
    expect(
      olderThan(
        lane.filter((e) => holdsBack(e, release, null, NONE)),
        release,
      ),
    ).toEqual(completion);
  });

  test('progress: in any lane, the oldest start message of a name that will start is held back by nobody', () => {
    const names = fc.constantFrom('TaskOpened', 'TaskCompleted', 'ExecutionStarted');
    const laneArb = fc.uniqueArray(
      fc.record({
        inboxId: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g'),
        messageName: names,
        s: fc.integer({ min: 0, max: 5 }),
      }),
      { minLength: 1, maxLength: 7, selector: (e) => e.inboxId },
    );
    fc.assert(
      fc.property(laneArb, (raw) => {
        const lane = raw.map((e) => entry(e.inboxId, e.messageName, e.s));
        const starts = lane.filter((e) => e.messageName === 'TaskOpened');
        for (const self of starts) {
          const blocker = olderThan(
            lane.filter((e) => holdsBack(e, self, willStart, NONE)),
            self,
          );
          // Held back only by an older start message of its name, so the oldest of them goes.
          if (blocker !== null) expect(blocker.messageName).toBe('TaskOpened');
          if (olderThan(starts, self) === null) expect(blocker).toBeNull();
        }
      }),
      { seed: 20_261_201, numRuns: 1_000 },
    );
  });
});
