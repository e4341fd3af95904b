import { explain } from '../../functions/src/operations/explain';
import { tokenText, when } from '../../functions/src/operations/explain-words';
import type { ExplainedDoc, ExplainFacts } from '../../functions/src/operations/explain-model';

/** The pure part of `inbox explain`, for what the emulator tests do not stage: dead letters, technical failures, requeued documents. */
const now = new Date('2026-12-01T12:00:00Z');
const HOUR = 3_600_000;
const doc = (over: Partial<ExplainedDoc>): ExplainedDoc => ({
  status: 'OPEN',
  reason: null,
  messageName: 'TaskCompleted',
  correlationKey: 'C-1',
  attempts: 0,
  nextAttemptAt: now,
  receivedAt: new Date(now.getTime() - HOUR),
  requeuedAt: null,
  parkedAt: null,
  lastError: null,
  validationError: null,
  collidesWith: null,
  deliveryCount: null,
  sourceSubscription: null,
  processInstanceId: null,
  processedAt: null,
  correlatedVia: null,
  expireAt: null,
  ...over,
});
const facts = (d: Partial<ExplainedDoc>, over: Partial<ExplainFacts> = {}): ExplainFacts => ({
  id: 'D',
  doc: doc(d),
  waiting: [],
  heldBehind: null,
  instances: [],
  bufferWindowMs: 24 * HOUR,
  ...over,
});

describe('explain', () => {
  test("DEAD_LETTERED: how often Pub/Sub tried, fix the cause, then the runbook's requeue commands", () => {
    const e = explain(
      facts({
        status: 'PARKED',
        reason: 'DEAD_LETTERED',
        deliveryCount: 10,
        sourceSubscription: 'projects/p/subscriptions/fixture-results-push',
      }),
      now,
    );
    expect(e.because[0]).toBe(
      'Pub/Sub gave up delivering it to the receiver after 10 attempts (subscription projects/p/subscriptions/fixture-results-push)',
    );
    expect(e.next).toEqual([
      "fix the cause first (the receiver's logs around the attempts)",
      'npx inbox requeue D',
      'all of them: npx inbox requeue --reason DEAD_LETTERED --since 1d --dry-run, then --yes',
    ]);
  });

  test('DEAD_LETTERED second payload of an event: admit-collision, not requeue', () => {
    const e = explain(facts({ status: 'PARKED', reason: 'DEAD_LETTERED', collidesWith: 'FIRST' }), now);
    expect(e.next).toEqual(['npx inbox repair admit-collision D --dry-run, then npx inbox repair admit-collision D']);
  });

  test('OPEN after technical failures: the error, and that it is retried, never parked for it', () => {
    const e = explain(
      facts({
        attempts: 3,
        lastError: 'UNAVAILABLE: 14 UNAVAILABLE: no connection',
        nextAttemptAt: new Date(now.getTime() + 90_000),
      }),
      now,
    );
    expect(e.summary).toBe(
      'OPEN (TaskCompleted, key C-1), 3 attempt(s) so far; next attempt 2026-12-01T12:01:30.000Z (in 2 min)',
    );
    expect(e.because[0]).toBe(
      'its last attempt failed: UNAVAILABLE: 14 UNAVAILABLE: no connection (technical failures are retried, never parked)',
    );
  });

  test('a requeued OPEN document: the window counts from the requeue', () => {
    const requeuedAt = new Date(now.getTime() - 2 * HOUR);
    const e = explain(facts({ receivedAt: new Date(now.getTime() - 72 * HOUR), requeuedAt }), now);
    expect(e.parkedFromIfUnclaimed).toEqual(new Date(requeuedAt.getTime() + 24 * HOUR));
    expect(e.because.join('\n')).toContain('the buffer window counts from its requeue');
  });

  test('an instance stopped by an incident: repair it first', () => {
    const e = explain(
      facts(
        {},
        {
          instances: [
            {
              id: 'I',
              businessKey: 'C-1',
              status: 'INCIDENT',
              completedAt: null,
              openIncidents: ['JOB_FAILED'],
              tokens: [
                {
                  executionId: 'E',
                  activityId: 'handOver',
                  status: 'WAITING_JOB',
                  waitingFor: null,
                  jobId: 'J',
                  waitsOn: null,
                },
              ],
            },
          ],
        },
      ),
      now,
    );
    expect(e.because).toContain(
      'instance I (business key C-1) is INCIDENT, open incidents: JOB_FAILED: token E is at activity handOver, waiting for job J',
    );
    expect(e.next[0]).toMatch(/^repair instance I first \(npx inbox incidents;/);
  });

  test.each([
    [new Date(now.getTime() + 30_000), 'in 30 s'],
    [new Date(now.getTime() - 5 * 60_000), '5 min ago'],
    [new Date(now.getTime() + 5 * HOUR), 'in 5 h'],
    [new Date(now.getTime() - 3 * 24 * HOUR), '3 d ago'],
  ])('when(%s)', (at, relative) => {
    expect(when(at, now)).toBe(`${at.toISOString()} (${relative})`);
  });
});

describe('a token in words', () => {
  test.each([
    [
      'WAITING_CALL',
      'ship',
      'C',
      'waits at call activity ship until the instance it called has no token left (inbox instance C)',
    ],
    ['WAITING_USER', 'review', 'U', 'waits at user task review for a person (inbox tasks show U)'],
    ['WAITING_SCOPE', 'sub', null, 'waits at subprocess sub until no token is left inside it'],
  ])('%s', (status, activityId, waitsOn, words) => {
    expect(tokenText({ executionId: 'E', activityId, status, waitingFor: null, jobId: null, waitsOn })).toBe(
      `token E ${words}`,
    );
  });
});
