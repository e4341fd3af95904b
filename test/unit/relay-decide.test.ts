import { backoffMs } from '../../functions/src/relay/backoff';
import { decide, type RelayOutcome, type RelayPolicy } from '../../functions/src/relay/decide';
import { holdUntil, isOlder, olderThan, oldestOf } from '../../functions/src/relay/lane';
import type { LaneEntry } from '../../functions/src/engine/store/collections';

const policy: RelayPolicy = {
  backoffBaseMs: 1_000,
  backoffCapMs: 60_000,
  bufferWindowMs: 24 * 3_600_000,
  errorAfterAttempts: 3,
};
const now = new Date('2026-11-29T12:00:00Z');
const received = (hoursAgo: number): Date => new Date(now.getTime() - hoursAgo * 3_600_000);
const point = {
  messageName: 'M',
  correlationKey: 'K',
  processInstanceId: 'p',
  executionId: 'e',
  activityId: 'a',
  createdAt: now,
};

describe('decide: the relay decision table', () => {
  const table: Array<
    [string, RelayOutcome, { attempts: number; hoursAgo: number; requeuedHoursAgo?: number }, Record<string, unknown>]
  > = [
    [
      'correlated',
      { kind: 'CORRELATED', processInstanceId: 'p-1' },
      { attempts: 0, hoursAgo: 0 },
      { kind: 'DONE', processInstanceId: 'p-1' },
    ],
    [
      'no waiting instance, inside the buffer window',
      { kind: 'NO_WAITING_INSTANCE' },
      { attempts: 2, hoursAgo: 1 },
      { kind: 'RETRY', attempts: 3, alarm: false },
    ],
    [
      'no waiting instance, window just passed',
      { kind: 'NO_WAITING_INSTANCE' },
      { attempts: 9, hoursAgo: 24 },
      { kind: 'PARK', reason: 'NO_WAITING_INSTANCE', attempts: 10 },
    ],
    [
      'no waiting instance, received long ago but requeued an hour ago: the window counts from the requeue',
      { kind: 'NO_WAITING_INSTANCE' },
      { attempts: 0, hoursAgo: 48, requeuedHoursAgo: 1 },
      { kind: 'RETRY', attempts: 1, alarm: false },
    ],
    [
      'no waiting instance, window passed since the requeue',
      { kind: 'NO_WAITING_INSTANCE' },
      { attempts: 4, hoursAgo: 72, requeuedHoursAgo: 24 },
      {
        kind: 'PARK',
        reason: 'NO_WAITING_INSTANCE',
        attempts: 5,
        lastError: expect.stringContaining('since the requeue'),
      },
    ],
    [
      'ambiguous on the first attempt',
      { kind: 'AMBIGUOUS', count: 2, waiting: [point, { ...point, executionId: 'e2' }] },
      { attempts: 0, hoursAgo: 0 },
      {
        kind: 'PARK',
        reason: 'AMBIGUOUS_CORRELATION',
        attempts: 1,
        details: {
          count: 2,
          waiting: [
            { processInstanceId: 'p', executionId: 'e', activityId: 'a' },
            { processInstanceId: 'p', executionId: 'e2', activityId: 'a' },
          ],
        },
      },
    ],
    [
      'technical, early',
      { kind: 'TECHNICAL', failure: { kind: 'retryable', code: 'UNAVAILABLE' }, error: 'down' },
      { attempts: 0, hoursAgo: 0 },
      { kind: 'RETRY', attempts: 1, alarm: false, lastError: 'UNAVAILABLE: down' },
    ],
    [
      'technical, from the alarm threshold on',
      { kind: 'TECHNICAL', failure: { kind: 'retryable', code: 'ABORTED' }, error: 'contention' },
      { attempts: 2, hoursAgo: 0 },
      { kind: 'RETRY', attempts: 3, alarm: true },
    ],
    [
      'technical, long past the buffer window: still never parked',
      { kind: 'TECHNICAL', failure: { kind: 'unexpected', code: 'UNKNOWN' }, error: 'bug' },
      { attempts: 500, hoursAgo: 24 * 30 },
      { kind: 'RETRY', attempts: 501, alarm: true },
    ],
  ];
  test.each(table)('%s', (_name, outcome, doc, expected) => {
    const decision = decide(
      outcome,
      {
        attempts: doc.attempts,
        receivedAt: received(doc.hoursAgo),
        requeuedAt: doc.requeuedHoursAgo === undefined ? null : received(doc.requeuedHoursAgo),
      },
      policy,
      now,
      0.5,
    );
    expect(decision).toMatchObject(expected);
    if (decision.kind === 'RETRY') expect(decision.nextAttemptAt.getTime()).toBeGreaterThan(now.getTime());
  });
});

describe('backoffMs', () => {
  test.each([
    [1, 0, 500],
    [1, 1, 1_000],
    [2, 1, 2_000],
    [5, 1, 16_000],
    [7, 1, 60_000],
    [50, 1, 60_000],
    [50, 0, 30_000],
  ])('attempt %d, random %d → %d ms', (attempt, random, expected) => {
    expect(backoffMs(attempt, 1_000, 60_000, random)).toBe(expected);
  });
  test('never exceeds the cap, never below half the step', () => {
    for (let attempt = 1; attempt < 40; attempt++) {
      for (const r of [0, 0.3, 0.99, 1]) {
        const ms = backoffMs(attempt, 1_000, 60_000, r);
        expect(ms).toBeLessThanOrEqual(60_000);
        expect(ms).toBeGreaterThanOrEqual(Math.min(60_000, 1_000 * 2 ** (attempt - 1)) / 2);
      }
    }
  });
});

describe('per-key order', () => {
  const at = (s: number): Date => new Date(now.getTime() + s * 1000);
  const e = (inboxId: string, publish: number | null, receive: number): LaneEntry => ({
    inboxId,
    messageName: 'M',
    publishTime: publish === null ? null : at(publish),
    receivedAt: at(receive),
  });
  test.each([
    ['earlier publishTime wins over earlier receipt', e('b', 1, 9), e('a', 2, 0), true],
    ['same publishTime: earlier receipt', e('b', 1, 1), e('a', 1, 2), true],
    ['same times: id decides', e('a', 1, 1), e('b', 1, 1), true],
    ['missing publishTime: receipt decides', e('b', null, 1), e('a', 5, 2), true],
    ['later publishTime', e('a', 3, 0), e('b', 2, 5), false],
  ])('%s', (_name, a, b, older) => {
    expect(isOlder(a, b)).toBe(older);
    expect(isOlder(b, a)).toBe(!older);
  });
  test('mixed present and missing publishTime still give one order (a < c < b; was a < c < b < a)', () => {
    // b has no publishTime: it sorts by its receipt (5) among the others' publish times (1, 2).
    const a = e('a', 1, 9);
    const b = e('b', null, 5);
    const c = e('c', 2, 0);
    expect([isOlder(a, c), isOlder(c, b), isOlder(b, a)]).toEqual([true, true, false]);
    expect(isOlder(a, b)).toBe(true);
    for (const lane of [
      [a, b, c],
      [b, c, a],
      [c, a, b],
    ])
      expect(oldestOf(lane)?.inboxId).toBe('a');
    expect(olderThan([a, b, c], a)).toBeNull();
  });
  test.each([
    ['due before its older one (in backoff): moved to 1 ms after it', 0, 45, 45_001],
    ['due before its older one (due too): moved behind it, still due', -60, -30, -29_999],
    ['already 1 ms after its older one: unchanged (no write)', 45.001, 45, null],
    ['later than its older one: unchanged, never earlier', 90, 45, null],
  ])('holdUntil: %s', (_name, own, older, expected) => {
    const result = holdUntil(at(own), at(older), now);
    expect(result === null ? null : result.getTime() - now.getTime()).toBe(expected);
  });
  test('holdUntil: an older document without nextAttemptAt counts as due now', () => {
    expect(holdUntil(at(-10), null, now)?.getTime()).toBe(now.getTime() + 1);
    expect(holdUntil(null, at(5), now)?.getTime()).toBe(now.getTime() + 5_001);
  });
  test('oldestOf and olderThan', () => {
    const lane = [e('x', 3, 3), e('y', 1, 9), e('z', 2, 0)];
    expect(oldestOf(lane)?.inboxId).toBe('y');
    expect(olderThan(lane, e('z', 2, 0))?.inboxId).toBe('y');
    expect(olderThan(lane, e('y', 1, 9))).toBeNull();
    expect(oldestOf([])).toBeNull();
  });
});
