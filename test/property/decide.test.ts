import fc from 'fast-check';
import type { FailureClass } from '../../functions/src/core/errors';
import type { WaitingPoint } from '../../functions/src/engine/state';
import {
  type CandidateState,
  decide,
  type Decision,
  type RelayOutcome,
  type RelayPolicy,
} from '../../functions/src/relay/decide';

/**
 * Properties of the relay's decision table (functions/src/relay/decide.ts):
 * what happens to an inbox document for every outcome, attempt count, age,
 * policy and clock, not only the rows of test/unit/relay-decide.test.ts.
 */

const RUNS = { seed: 20_261_129, numRuns: 1_000 };
const T0 = Date.parse('2026-11-29T12:00:00Z');

const policyArb: fc.Arbitrary<RelayPolicy> = fc
  .record({
    backoffBaseMs: fc.integer({ min: 1, max: 60_000 }),
    backoffCapMs: fc.integer({ min: 1, max: 3_600_000 }),
    bufferWindowMs: fc.integer({ min: 1, max: 7 * 86_400_000 }),
    errorAfterAttempts: fc.integer({ min: 1, max: 50 }),
  })
  .map((p) => ({ ...p, backoffCapMs: Math.max(p.backoffCapMs, p.backoffBaseMs) }));

const pointArb: fc.Arbitrary<WaitingPoint> = fc.record({
  messageName: fc.string(),
  correlationKey: fc.string(),
  processInstanceId: fc.string(),
  executionId: fc.string(),
  activityId: fc.string(),
  createdAt: fc.constant(new Date(T0)),
});
const failureArb: fc.Arbitrary<FailureClass> = fc.oneof(
  fc.record({
    kind: fc.constant('retryable' as const),
    code: fc.constantFrom('UNAVAILABLE', 'ABORTED', 'DEADLINE_EXCEEDED'),
  }),
  fc.record({ kind: fc.constant('unexpected' as const), code: fc.constant('UNKNOWN') }),
);
const correlated: fc.Arbitrary<RelayOutcome> = fc.record({
  kind: fc.constant('CORRELATED' as const),
  processInstanceId: fc.string({ minLength: 1 }),
});
const noWaiting: fc.Arbitrary<RelayOutcome> = fc.constant({ kind: 'NO_WAITING_INSTANCE' as const });
const ambiguous: fc.Arbitrary<RelayOutcome> = fc
  .array(pointArb, { minLength: 2, maxLength: 4 })
  .map((waiting) => ({ kind: 'AMBIGUOUS' as const, count: waiting.length, waiting }));
const technical: fc.Arbitrary<RelayOutcome> = fc.record({
  kind: fc.constant('TECHNICAL' as const),
  failure: failureArb,
  error: fc.string(),
});
/** Ages from "received in the future" (clock skew between receiver and relay) to a year old. */
const docArb = (now: Date): fc.Arbitrary<CandidateState> =>
  fc
    .record({
      attempts: fc.nat({ max: 10_000 }),
      ageMs: fc.integer({ min: -60_000, max: 365 * 86_400_000 }),
      requeuedAgoMs: fc.option(fc.integer({ min: -60_000, max: 365 * 86_400_000 })),
    })
    .map(({ attempts, ageMs, requeuedAgoMs }) => ({
      attempts,
      receivedAt: new Date(now.getTime() - ageMs),
      requeuedAt: requeuedAgoMs === null ? null : new Date(now.getTime() - requeuedAgoMs),
    }));
const nowArb = fc.integer({ min: T0 - 365 * 86_400_000, max: T0 + 365 * 86_400_000 }).map((ms) => new Date(ms));
const randomArb = fc.double({ min: 0, max: 1, noNaN: true });
const caseOf = (outcome: fc.Arbitrary<RelayOutcome>) =>
  nowArb.chain((now) =>
    fc.record({ outcome, doc: docArb(now), policy: policyArb, now: fc.constant(now), random: randomArb }),
  );
const caseArb = caseOf(fc.oneof(correlated, noWaiting, ambiguous, technical));

/** A retry is due strictly after now (else the relay would spin on it) and at most one cap later. */
function expectRetryWindow(decision: Decision, now: Date, policy: RelayPolicy): void {
  if (decision.kind !== 'RETRY') throw new Error(`expected RETRY, got ${decision.kind}`);
  expect(decision.nextAttemptAt.getTime()).toBeGreaterThan(now.getTime());
  expect(decision.nextAttemptAt.getTime()).toBeLessThanOrEqual(now.getTime() + policy.backoffCapMs);
}

describe('decide', () => {
  test('DONE exactly for CORRELATED, naming the same instance; every other decision counts one more attempt', () => {
    fc.assert(
      fc.property(caseArb, ({ outcome, doc, policy, now, random }) => {
        const decision = decide(outcome, doc, policy, now, random);
        expect(decision.kind === 'DONE').toBe(outcome.kind === 'CORRELATED');
        if (decision.kind === 'DONE' && outcome.kind === 'CORRELATED')
          expect(decision.processInstanceId).toBe(outcome.processInstanceId);
        if (decision.kind !== 'DONE') expect(decision.attempts).toBe(doc.attempts + 1);
        // A parked document must say why, for the operator who requeues it.
        if (decision.kind !== 'DONE') expect(decision.lastError.length).toBeGreaterThan(0);
      }),
      RUNS,
    );
  });

  test('AMBIGUOUS parks at once whatever the attempts and age, and lists every waiting token', () => {
    fc.assert(
      fc.property(caseOf(ambiguous), ({ outcome, doc, policy, now, random }) => {
        const decision = decide(outcome, doc, policy, now, random);
        expect(decision).toMatchObject({ kind: 'PARK', reason: 'AMBIGUOUS_CORRELATION' });
        if (decision.kind !== 'PARK' || outcome.kind !== 'AMBIGUOUS') return;
        expect(decision.details).toMatchObject({ count: outcome.count });
        expect(decision.details['waiting']).toEqual(
          outcome.waiting.map((w) => ({
            processInstanceId: w.processInstanceId,
            executionId: w.executionId,
            activityId: w.activityId,
          })),
        );
      }),
      RUNS,
    );
  });

  test('TECHNICAL never parks, for any attempts or age; the alarm is on exactly from errorAfterAttempts on', () => {
    fc.assert(
      fc.property(caseOf(technical), ({ outcome, doc, policy, now, random }) => {
        const decision = decide(outcome, doc, policy, now, random);
        expectRetryWindow(decision, now, policy);
        if (decision.kind === 'RETRY') expect(decision.alarm).toBe(doc.attempts + 1 >= policy.errorAfterAttempts);
      }),
      RUNS,
    );
  });

  test('the alarm is monotone: once a document alarms, more attempts keep it alarming', () => {
    fc.assert(
      fc.property(caseOf(technical), fc.nat({ max: 1_000 }), ({ outcome, doc, policy, now, random }, more) => {
        const alarm = (attempts: number): boolean => {
          const d = decide(outcome, { ...doc, attempts }, policy, now, random);
          return d.kind === 'RETRY' && d.alarm;
        };
        if (alarm(doc.attempts)) expect(alarm(doc.attempts + more)).toBe(true);
      }),
      RUNS,
    );
  });

  test('NO_WAITING_INSTANCE parks iff the buffer window has passed since receipt (since the requeue, if requeued), else retries without alarm', () => {
    fc.assert(
      fc.property(caseOf(noWaiting), ({ outcome, doc, policy, now, random }) => {
        const decision = decide(outcome, doc, policy, now, random);
        const waited = now.getTime() - (doc.requeuedAt ?? doc.receivedAt).getTime();
        if (waited >= policy.bufferWindowMs) {
          expect(decision).toMatchObject({
            kind: 'PARK',
            reason: 'NO_WAITING_INSTANCE',
            details: { waitedMs: waited },
          });
        } else {
          expectRetryWindow(decision, now, policy);
          expect(decision).toMatchObject({ alarm: false });
        }
      }),
      RUNS,
    );
  });

  test('a message nobody waits for, retried whenever due, parks at its first attempt after the window, within one cap of it', () => {
    // Window at most 20 caps, so the simulation stays short.
    const arb = fc
      .record({ policy: policyArb, random: fc.array(randomArb, { minLength: 1, maxLength: 8 }) })
      .map(({ policy, random }) => ({
        policy: { ...policy, bufferWindowMs: Math.min(policy.bufferWindowMs, 20 * policy.backoffCapMs) },
        random,
      }));
    fc.assert(
      fc.property(arb, ({ policy, random }) => {
        let doc: CandidateState = { attempts: 0, receivedAt: new Date(T0) };
        let now = doc.receivedAt;
        let decision = decide({ kind: 'NO_WAITING_INSTANCE' }, doc, policy, now, random[0] ?? 0);
        // Plain checks in the loop (expect() is slow over thousands of steps); the loop ends because each retry moves the clock on.
        for (let i = 1; decision.kind === 'RETRY'; i++) {
          if (decision.nextAttemptAt.getTime() <= now.getTime())
            throw new Error(`retry ${i} is not after now: the relay would spin`);
          now = decision.nextAttemptAt;
          doc = { ...doc, attempts: decision.attempts };
          decision = decide({ kind: 'NO_WAITING_INSTANCE' }, doc, policy, now, random[i % random.length] ?? 0);
        }
        expect(decision).toMatchObject({ kind: 'PARK', reason: 'NO_WAITING_INSTANCE', attempts: doc.attempts + 1 });
        expect(now.getTime()).toBeGreaterThanOrEqual(T0 + policy.bufferWindowMs);
        expect(now.getTime()).toBeLessThanOrEqual(T0 + policy.bufferWindowMs + policy.backoffCapMs);
      }),
      { ...RUNS, numRuns: 300 },
    );
  });
});
