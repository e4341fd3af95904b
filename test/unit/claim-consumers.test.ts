import { explain } from '../../functions/src/operations/explain';
import type { ExplainedDoc } from '../../functions/src/operations/explain-model';
import { preview } from '../../functions/src/operations/claim-view';
import { REASONS } from '../../functions/src/operations/vocabulary';
import type { ReferenceClaim } from '../../functions/src/inbox/claim-check';
import { decide, type RelayPolicy } from '../../functions/src/relay/decide';
import {
  referenceToCheck,
  unavailableReference,
  type ReferenceChecks,
} from '../../functions/src/relay/reference-check';

/**
 * The pure parts of the claim check's consumers (issue 17): the relay's park
 * for an unreadable reference, its words in `inbox explain`, which document
 * needs a stat, show's preview of a large payload, the age of an object
 * from its generation.
 */
const policy: RelayPolicy = {
  backoffBaseMs: 1_000,
  backoffCapMs: 60_000,
  bufferWindowMs: 24 * 3_600_000,
  errorAfterAttempts: 3,
};
const now = new Date('2026-12-01T12:00:00Z');
const uri = 'gs://sender-reports/reports/C-1.json#1764590400000000';
const reference: ReferenceClaim = {
  bucket: 'sender-reports',
  object: 'reports/C-1.json',
  generation: '1764590400000000',
  uri,
  carriedIn: 'field',
  name: 'report',
  variable: 'caseReport',
};

describe('decide: REFERENCE_UNAVAILABLE', () => {
  test.each([
    ['MISSING', { kind: 'MISSING' } as const, { uri, unavailable: 'MISSING' }, 'is MISSING'],
    [
      'CHANGED',
      { kind: 'CHANGED', liveGeneration: '1764590499999999' } as const,
      { uri, unavailable: 'CHANGED', liveGeneration: '1764590499999999' },
      'now holds generation 1764590499999999',
    ],
  ])(
    '%s parks at once, on the first attempt, saying which (and the live generation)',
    (_name, unavailable, details, words) => {
      const decision = decide(
        { kind: 'REFERENCE_UNAVAILABLE', uri, unavailable },
        { attempts: 0, receivedAt: now },
        policy,
        now,
        0.5,
      );
      expect(decision).toMatchObject({ kind: 'PARK', reason: 'REFERENCE_UNAVAILABLE', attempts: 1, details });
      if (decision.kind !== 'PARK') return;
      expect(decision.lastError).toContain(uri);
      expect(decision.lastError).toContain(words);
      expect(decision.lastError).toContain('sends a new message');
    },
  );
});

describe('reference-check: which document needs a stat, and what it found', () => {
  test('no reference (an old document, or none): nothing to check, nothing unavailable', () => {
    const checks: ReferenceChecks = new Map();
    expect(referenceToCheck({}, checks)).toBeNull();
    expect(referenceToCheck({ reference: null }, checks)).toBeNull();
    expect(unavailableReference({ reference: null }, checks)).toBeNull();
  });

  test('a reference not checked yet is to be checked; once checked it is not again, and only MISSING or CHANGED makes it unavailable', () => {
    const checks: ReferenceChecks = new Map();
    expect(referenceToCheck({ reference }, checks)).toBe(reference);
    checks.set(uri, { kind: 'FOUND', bytes: 12 });
    expect(referenceToCheck({ reference }, checks)).toBeNull();
    expect(unavailableReference({ reference }, checks)).toBeNull();
    checks.set(uri, { kind: 'CHANGED', liveGeneration: '7' });
    expect(unavailableReference({ reference }, checks)).toEqual({
      kind: 'REFERENCE_UNAVAILABLE',
      uri,
      unavailable: { kind: 'CHANGED', liveGeneration: '7' },
    });
  });
});

describe('inbox explain: REFERENCE_UNAVAILABLE and offloaded payloads', () => {
  const doc = (over: Partial<ExplainedDoc>): ExplainedDoc => ({
    status: 'PARKED',
    reason: 'REFERENCE_UNAVAILABLE',
    messageName: 'TaskCompleted',
    correlationKey: 'C-1',
    attempts: 1,
    nextAttemptAt: null,
    receivedAt: now,
    requeuedAt: null,
    parkedAt: now,
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
  const facts = (d: ExplainedDoc): Parameters<typeof explain>[0] => ({
    id: 'D',
    doc: d,
    waiting: [],
    heldBehind: null,
    instances: [],
    bufferWindowMs: 24 * 3_600_000,
  });

  test.each([
    ['MISSING', { uri, unavailable: 'MISSING' }, 'is missing'],
    ['CHANGED', { uri, unavailable: 'CHANGED', liveGeneration: '99' }, 'holds generation 99 now'],
  ])(
    '%s: what happened, and what to do: a new upload and message, or restore and requeue',
    (_name, parkDetails, what) => {
      const e = explain(facts(doc({ parkDetails })), now);
      expect(e.because[0]).toContain(uri);
      expect(e.because[0]).toContain(what);
      expect(e.next[0]).toContain('upload the data again and send a new message');
      expect(e.next[1]).toContain('restore that generation');
      expect(e.next[1]).toContain('npx inbox requeue D');
    },
  );

  test('a DONE offloaded document: swept with its object, not deleted by the TTL', () => {
    const payloadExpireAt = new Date(now.getTime() + 7 * 24 * 3_600_000);
    const e = explain(
      facts(
        doc({
          status: 'DONE',
          reason: null,
          correlatedVia: 'RELAY',
          processInstanceId: 'I',
          payloadExpireAt,
          offloadedUri: 'gs://p/payloads/x/y.json#5',
        }),
      ),
      now,
    );
    expect(e.because.join('\n')).toContain(
      'the payload sweep deletes the object, then the document, from 2026-12-08T12:00:00.000Z',
    );
    expect(e.because.join('\n')).not.toContain('Firestore TTL');
  });

  test('a DONE offloaded document its instance may still read: kept past payloadExpireAt, and why', () => {
    const payloadExpireAt = new Date(now.getTime() - 24 * 3_600_000);
    const keptFor = { processInstanceId: 'I', instanceStatus: 'INCIDENT' };
    const e = explain(
      facts(
        doc({
          status: 'DONE',
          reason: null,
          correlatedVia: 'RELAY',
          processInstanceId: 'I',
          payloadExpireAt,
          offloadedUri: 'gs://p/payloads/x/y.json#5',
          keptFor,
        }),
      ),
      now,
    );
    expect(e.because).toContain(
      'not before instance I has completed (now INCIDENT): the instance holds only the reference, and a step of it may still read the object (after an incident, a repair runs that step again); the payload sweep keeps both and looks again every hour',
    );
    const free = explain(
      facts(
        doc({
          status: 'DONE',
          reason: null,
          correlatedVia: 'RELAY',
          processInstanceId: 'I',
          payloadExpireAt,
          offloadedUri: 'gs://p/payloads/x/y.json#5',
          keptFor: null,
        }),
      ),
      now,
    );
    expect(free.because.join('\n')).not.toContain('not before instance');
  });

  test('a DONE document with raw bytes in rawChunks (a dismissed unreadable message): swept with its chunks', () => {
    const payloadExpireAt = new Date(now.getTime() + 7 * 24 * 3_600_000);
    const e = explain(
      facts(doc({ status: 'DONE', reason: null, correlatedVia: 'DISMISSED', payloadExpireAt, rawDataChunks: 2 })),
      now,
    );
    expect(e.because).toContain(
      'its raw bytes are in 2 rawChunks document(s): the payload sweep deletes them with the document, from 2026-12-08T12:00:00.000Z (in 7 d)',
    );
  });

  test('the CLI knows the reason (stats, list --reason, requeue --reason)', () => {
    expect(REASONS).toContain('REFERENCE_UNAVAILABLE');
  });
});

describe('inbox show: preview of a large payload', () => {
  test('lists are cut to their first items with how many were left out; other fields stay', () => {
    const items = Array.from({ length: 3000 }, (_, i) => ({ itemId: `I-${i}`, quantity: 1 }));
    expect(preview({ caseId: 'C-1', lineItems: items, tags: ['a'] }, 2)).toEqual({
      caseId: 'C-1',
      lineItems: [items[0], items[1], '… 2998 more of 3000'],
      tags: ['a'],
    });
    expect(preview('not an object')).toBe('not an object');
  });
});
