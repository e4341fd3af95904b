import { interpretMessage } from '../../functions/src/receiver/interpret';
import { FIXTURE_REGISTRY } from '../support/app';
import type { PushEnvelope } from '../../functions/src/inbox/draft';
import { messageDocId } from '../../functions/src/inbox/ids';

function env(
  data: string,
  attributes: Record<string, string> = { eventType: 'TaskCompleted' },
  messageId = 'm-1',
): PushEnvelope {
  return {
    messageId,
    subscription: 'projects/p/subscriptions/s',
    data,
    attributes,
    publishTime: null,
    orderingKey: null,
    deliveryAttempt: null,
  };
}
const b64 = (v: unknown): string => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64');
/** No bucket allowed: no test here carries a reference. */
const NO_CLAIMS = { referenceBuckets: [] } as const;
const valid = { caseId: 'C-1', completedItems: 5, completionTimestamp: '2026-11-29T10:00:00Z' };

describe('interpretMessage', () => {
  test('a valid completion gets its keys from the registry', () => {
    const draft = interpretMessage(env(b64(valid)), FIXTURE_REGISTRY, NO_CLAIMS);
    expect(draft).toMatchObject({
      kind: 'valid',
      messageName: 'TaskCompleted',
      correlationKey: 'C-1',
      dedupKey: 'TaskCompleted:C-1',
    });
    expect(draft.id).toBe(messageDocId('TaskCompleted', 'C-1', 'TaskCompleted:C-1'));
  });

  test("the sender's eventId is the dedup key when present", () => {
    const draft = interpretMessage(env(b64({ ...valid, eventId: 'evt-9' })), FIXTURE_REGISTRY, NO_CLAIMS);
    expect(draft).toMatchObject({ kind: 'valid', dedupKey: 'evt-9' });
  });

  test('payload hash ignores key order and whitespace, and unknown fields are dropped', () => {
    const a = interpretMessage(env(b64(valid)), FIXTURE_REGISTRY, NO_CLAIMS);
    const b = interpretMessage(
      env(
        b64(`{ "completionTimestamp":"2026-11-29T10:00:00Z",  "completedItems":5, "caseId":"C-1", "extra": {"x":1} }`),
      ),
      FIXTURE_REGISTRY,
      NO_CLAIMS,
    );
    expect(a.kind === 'valid' && b.kind === 'valid').toBe(true);
    expect(b.payloadHash).toBe(a.payloadHash);
    expect(b.kind === 'valid' && b.payload).toEqual(valid);
  });

  test('a different payload under the same key hashes differently', () => {
    const a = interpretMessage(env(b64(valid)), FIXTURE_REGISTRY, NO_CLAIMS);
    const b = interpretMessage(env(b64({ ...valid, completedItems: 6 })), FIXTURE_REGISTRY, NO_CLAIMS);
    expect(a.id).toBe(b.id);
    expect(a.payloadHash).not.toBe(b.payloadHash);
  });

  const invalid: Array<[string, PushEnvelope, string]> = [
    ['invalid base64', env('not base64!'), 'not valid base64'],
    ['no eventType attribute', env(b64(valid), {}), 'message name missing'],
    ['unknown message name', env(b64(valid), { eventType: 'TaskCancelled' }), 'unknown message name "TaskCancelled"'],
    ['not UTF-8', env(Buffer.from([0xff, 0xfe, 0x00]).toString('base64')), 'not UTF-8'],
    ['not JSON', env(b64('hello')), 'not JSON'],
    ['empty data', env(''), 'not JSON'],
    ['JSON array', env(b64([1, 2])), 'does not match its schema'],
    ['missing correlation key', env(b64({ completedItems: 1, completionTimestamp: '2026-11-29T10:00:00Z' })), 'caseId'],
    ['empty correlation key', env(b64({ ...valid, caseId: '   ' })), 'caseId'],
    ['negative completedItems', env(b64({ ...valid, completedItems: -1 })), 'completedItems'],
    ['fractional completedItems', env(b64({ ...valid, completedItems: 1.5 })), 'completedItems'],
    ['timestamp not ISO-8601', env(b64({ ...valid, completionTimestamp: '29.11.2026' })), 'completionTimestamp'],
    ['huge correlation key', env(b64({ ...valid, caseId: 'x'.repeat(300) })), 'caseId'],
    ['deeply nested JSON', env(b64('['.repeat(100_000) + ']'.repeat(100_000))), 'does not match its schema'],
    // Found by the hostile suite: valid JSON and schema, but text Firestore cannot store (the write failed on every redelivery).
    [
      'an escaped lone surrogate in the correlation key',
      env(b64('{"caseId":"C-\\ud800","completedItems":1,"completionTimestamp":"2026-11-29T10:00:00Z"}')),
      'caseId is not valid Unicode (lone surrogate)',
    ],
    [
      'an escaped lone surrogate in the event id',
      env(b64({ ...valid, eventId: 'e-\udc00' })),
      'eventId is not valid Unicode (lone surrogate)',
    ],
  ];
  test.each(invalid)('%s is parked as INVALID_PAYLOAD material', (_name, envelope, error) => {
    const draft = interpretMessage(envelope, FIXTURE_REGISTRY, { referenceBuckets: [] });
    expect(draft.kind).toBe('invalid');
    if (draft.kind !== 'invalid') return;
    expect(draft.error).toContain(error);
    expect(draft.error.length).toBeLessThanOrEqual(2_100);
    expect(draft.payloadHash).toMatch(/^[0-9a-f]{64}$/);
  });

  test('invalid messages are keyed by subscription and messageId', () => {
    const a = interpretMessage(env('bad!', {}, 'm-1'), FIXTURE_REGISTRY, { referenceBuckets: [] });
    const b = interpretMessage(env('bad!', {}, 'm-2'), FIXTURE_REGISTRY, { referenceBuckets: [] });
    const c = interpretMessage(
      { ...env('bad!', {}, 'm-1'), subscription: 'projects/p/subscriptions/other' },
      FIXTURE_REGISTRY,
      { referenceBuckets: [] },
    );
    expect(new Set([a.id, b.id, c.id]).size).toBe(3);
    expect(interpretMessage(env('bad!', {}, 'm-1'), FIXTURE_REGISTRY, { referenceBuckets: [] }).id).toBe(a.id);
  });

  test('undecodable base64 keeps the received text as raw data', () => {
    const draft = interpretMessage(env('@@@'), FIXTURE_REGISTRY, { referenceBuckets: [] });
    expect(draft).toMatchObject({ kind: 'invalid', rawDataForm: 'UNDECODABLE_BASE64' });
    expect(draft.kind === 'invalid' && draft.rawData.toString()).toBe('@@@');
  });
});
