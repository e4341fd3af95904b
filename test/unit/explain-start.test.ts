import { explain } from '../../functions/src/operations/explain';
import type { ExplainedDoc, ExplainFacts, InstanceFact } from '../../functions/src/operations/explain-model';

/** `inbox explain` for start messages and dismissed documents, the cases the emulator tests do not stage. */
const now = new Date('2026-12-01T12:00:00Z');
const HOUR = 3_600_000;
const doc = (over: Partial<ExplainedDoc>): ExplainedDoc => ({
  status: 'OPEN',
  reason: null,
  messageName: 'TaskOpened',
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
const start = { processKey: 'fixture-opening', activityId: 'released', instanceId: 'I' };
const instance: InstanceFact = {
  id: 'I',
  businessKey: 'C-1',
  status: 'RUNNING',
  completedAt: null,
  tokens: [],
  openIncidents: [],
};

describe('explain: start messages', () => {
  test('OPEN, its instance exists already: the next attempt parks it ALREADY_STARTED', () => {
    const e = explain(facts({}, { start, instances: [instance] }), now);
    expect(e.because).toEqual([
      'no token waits for it, and process fixture-opening, which TaskOpened starts, has its instance for this key already (I, RUNNING): its next attempt parks it ALREADY_STARTED',
    ]);
    expect(e.parkedFromIfUnclaimed).toBeNull();
  });

  test('OPEN, a token waits for it: correlated, as any message (the start does not apply)', () => {
    const e = explain(
      facts({}, { start, waiting: [{ processInstanceId: 'J', executionId: 'E', activityId: 'wait' }] }),
      now,
    );
    expect(e.because).toEqual([
      'token E of instance J waits for it at wait: the relay correlates it at its next attempt',
    ]);
  });

  test('PARKED START_REFUSED: the door check, and what heals it', () => {
    const e = explain(
      facts({
        status: 'PARKED',
        reason: 'START_REFUSED',
        parkDetails: {
          problem:
            'variables.orderId is required: process p correlates on it (wait waits for Done); give a non-empty string or a number',
        },
      }),
      now,
    );
    expect(e.because[0]).toBe(
      'the message would start a process, but variables.orderId is required: process p correlates on it (wait waits for Done); give a non-empty string or a number',
    );
    expect(e.next).toEqual([
      'have the sender republish it with what the process needs, or fix the model and then npx inbox requeue D',
      'if it is not to be processed: npx inbox repair dismiss D --note "…"',
    ]);
  });

  test('DONE by a start: the instance it started', () => {
    const e = explain(
      facts(
        { status: 'DONE', correlatedVia: 'START', processInstanceId: 'I', processedAt: now },
        { instances: [instance] },
      ),
      now,
    );
    expect(e.summary).toBe('DONE: started instance I (now RUNNING) at 2026-12-01T12:00:00.000Z (in 0 s)');
  });

  test('DONE by dismissal without an instance: who and why, no instance line', () => {
    const dismissed = {
      by: 'oncall',
      at: now,
      note: 'late duplicate of a cancelled order',
      previousReason: 'NO_WAITING_INSTANCE',
    };
    const e = explain(facts({ status: 'DONE', correlatedVia: 'DISMISSED', processedAt: now, dismissed }), now);
    expect(e.summary).toBe(
      'DONE: dismissed by oncall at 2026-12-01T12:00:00.000Z (in 0 s) (it was PARKED / NO_WAITING_INSTANCE)',
    );
    expect(e.because).toEqual([
      "the operator's note: late duplicate of a cancelled order",
      'its processed record keeps a redelivery a duplicate',
    ]);
  });
});
