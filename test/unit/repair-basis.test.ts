import fc from 'fast-check';
import {
  BasisChangedError,
  checkBasis,
  documentBasis,
  formatBasis,
  incidentsBasis,
  parseBasis,
  type RepairBasis,
  sameBasis,
  tokenBasis,
  tokensBasis,
} from '../../functions/src/engine/repair-basis';
import type { ExecutionState, InstanceState } from '../../functions/src/engine/state';
import { basisChangeText } from '../../functions/src/operations/basis-change';

/** engine/repair-basis.ts and operations/basis-change.ts: what a preview read, and the words when it changed. */
const t0 = new Date('2026-12-03T10:00:00Z');
const token = (over: Partial<ExecutionState> = {}): ExecutionState => ({
  id: 'e-1',
  processInstanceId: 'i-1',
  activityId: 'waitForCompletion',
  status: 'WAITING_MESSAGE',
  step: 3,
  jobId: null,
  waitingFor: { messageName: 'TaskCompleted', correlationKey: 'C-1' },
  createdAt: t0,
  updatedAt: t0,
  ...over,
});
const instance = (over: Partial<InstanceState> = {}): InstanceState => ({
  id: 'i-1',
  processKey: 'p',
  processVersion: '1',
  businessKey: 'C-1',
  status: 'RUNNING',
  variables: {},
  activeExecutionIds: ['e-1'],
  incidents: [],
  createdAt: t0,
  updatedAt: t0,
  completedAt: null,
  ...over,
});
const label = (id: string): string =>
  ({ waitForCompletion: 'Wait for completion (waitForCompletion)', settle: 'Settle (settle)' })[id] ?? id;
const refusal = (then: RepairBasis, now: RepairBasis): string =>
  basisChangeText(new BasisChangedError(then, now, 'it'), label);

describe('the basis of each repair', () => {
  test('a token: where it stands, its step and its state', () => {
    expect(tokenBasis(token())).toEqual({
      subject: 'token',
      facts: { at: 'waitForCompletion', step: '3', status: 'WAITING_MESSAGE' },
    });
  });

  test('an instance a token is added to: its status and its live tokens, sorted; ended ones left out', () => {
    const tokens = {
      'e-2': token({ id: 'e-2', activityId: 'settle', step: 5 }),
      'e-1': token(),
      'e-0': token({ id: 'e-0', status: 'ENDED' }),
    };
    expect(tokensBasis(instance({ activeExecutionIds: ['e-2', 'e-1'] }), tokens)).toEqual({
      subject: 'tokens',
      facts: { status: 'RUNNING', tokens: 'e-1@waitForCompletion#3,e-2@settle#5' },
    });
  });

  test('incidents: the open ones only, in the order raised', () => {
    const i = instance({
      status: 'INCIDENT',
      incidents: [
        {
          reason: 'JOB_FAILED',
          executionId: 'e-1',
          activityId: 'settle',
          message: 'm',
          at: t0,
          resolvedAt: t0,
          resolution: null,
        },
        {
          reason: 'DUPLICATE_WAITING_POINT',
          executionId: 'e-1',
          activityId: 'waitForCompletion',
          message: 'm',
          at: t0,
        },
      ],
    });
    expect(incidentsBasis(i)).toEqual({
      subject: 'incidents',
      facts: { status: 'INCIDENT', open: 'DUPLICATE_WAITING_POINT@waitForCompletion' },
    });
  });

  test('a document: status and reason; a missing one is ABSENT', () => {
    expect(documentBasis({ status: 'PARKED', reason: 'NO_WAITING_INSTANCE' })).toEqual({
      subject: 'document',
      facts: { status: 'PARKED', reason: 'NO_WAITING_INSTANCE' },
    });
    expect(documentBasis(undefined).facts.status).toBe('ABSENT');
  });
});

describe('checkBasis', () => {
  test('no expectation (a run without a preview): nothing to compare', () => {
    expect(() => checkBasis(undefined, tokenBasis(token()), 'token e-1')).not.toThrow();
  });

  test('the same basis passes; any other fact refuses, naming then and now', () => {
    expect(() => checkBasis(tokenBasis(token()), tokenBasis(token()), 'token e-1')).not.toThrow();
    for (const moved of [token({ activityId: 'settle' }), token({ step: 4 }), token({ status: 'WAITING_JOB' })]) {
      expect(() => checkBasis(tokenBasis(token()), tokenBasis(moved), 'token e-1')).toThrow(BasisChangedError);
    }
    expect(() => checkBasis(tokenBasis(token()), documentBasis({ status: 'OPEN', reason: null }), 'x')).toThrow(
      /changed since the preview/,
    );
  });
});

describe('the refusal in words', () => {
  test.each([
    [
      'moved on',
      token({ activityId: 'settle', step: 4, status: 'WAITING_JOB' }),
      'refused: the token moved from Wait for completion (waitForCompletion) to Settle (settle) since the preview',
    ],
    [
      'cancelled',
      token({ status: 'CANCELLED' }),
      'refused: the token was cancelled at Wait for completion (waitForCompletion) since the preview',
    ],
    [
      'ended',
      token({ activityId: 'end', status: 'ENDED', step: 6 }),
      'refused: the token ended at end since the preview (it was at Wait for completion (waitForCompletion))',
    ],
    [
      'back at the same activity',
      token({ step: 9 }),
      'refused: the token left Wait for completion (waitForCompletion) and came back since the preview (step 3, now 9)',
    ],
    [
      'the same place, another state',
      token({ status: 'ACTIVE' }),
      'refused: the token at Wait for completion (waitForCompletion) is ACTIVE now, WAITING_MESSAGE at the preview',
    ],
  ])('a token %s', (_name, now, words) => {
    const text = refusal(tokenBasis(token()), tokenBasis(now));
    expect(text.startsWith(words)).toBe(true);
    expect(text).toMatch(/nothing was done; preview again/);
  });

  test('a document requeued and parked again; a new incident', () => {
    expect(
      refusal(
        documentBasis({ status: 'PARKED', reason: 'NO_WAITING_INSTANCE' }),
        documentBasis({ status: 'PARKED', reason: 'MANUAL' }),
      ),
    ).toMatch(/^refused: the document is PARKED MANUAL now, PARKED NO_WAITING_INSTANCE at the preview/);
    const then = incidentsBasis(
      instance({
        status: 'INCIDENT',
        incidents: [{ reason: 'JOB_FAILED', executionId: 'e-1', activityId: 'settle', message: 'm', at: t0 }],
      }),
    );
    const now = incidentsBasis(
      instance({
        status: 'INCIDENT',
        incidents: [
          { reason: 'JOB_FAILED', executionId: 'e-1', activityId: 'settle', message: 'm', at: t0 },
          { reason: 'STEP_LIMIT', executionId: 'e-2', activityId: 'loop', message: 'm', at: t0 },
        ],
      }),
    );
    expect(refusal(then, now)).toMatch(/incidents changed since the preview .*JOB_FAILED@settle,STEP_LIMIT@loop/);
  });
});

describe('the --expect line', () => {
  const id = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_.-]{0,20}$/);
  const bases: fc.Arbitrary<RepairBasis> = fc.oneof(
    fc
      .record({ activityId: id, step: fc.nat(), status: fc.constantFrom('WAITING_JOB', 'WAITING_MESSAGE', 'ENDED') })
      .map((t) => tokenBasis(token(t as Partial<ExecutionState>))),
    fc
      .record({
        status: fc.constantFrom('OPEN', 'PARKED'),
        reason: fc.option(fc.constantFrom('MANUAL', 'DEAD_LETTERED'), { nil: null }),
      })
      .map(documentBasis),
    fc.array(fc.tuple(id, fc.nat()), { maxLength: 4 }).map((ts) => ({
      subject: 'tokens' as const,
      facts: { status: 'RUNNING', tokens: ts.map(([a, s], i) => `e${i}@${a}#${s}`).join(',') },
    })),
  );

  test('reads back as the basis it printed (property)', () => {
    fc.assert(fc.property(bases, (b) => sameBasis(parseBasis(formatBasis(b)) ?? { subject: 'token', facts: {} }, b)));
  });

  test('text no --dry-run printed is refused', () => {
    for (const text of ['', 'token', 'nonsense:at=x', 'token:at', 'token:=x', 'token:at=x;at=y', 'token:AT=x'])
      expect(parseBasis(text)).toBeNull();
    expect(formatBasis(tokenBasis(token()))).toBe('token:at=waitForCompletion;step=3;status=WAITING_MESSAGE');
  });
});
