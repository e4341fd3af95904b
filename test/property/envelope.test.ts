import fc from 'fast-check';
import { messageDocId } from '../../functions/src/inbox/ids';
import type { PushEnvelope } from '../../functions/src/inbox/draft';
import { decodeBase64, parsePushEnvelope } from '../../functions/src/receiver/envelope';
import { interpretMessage } from '../../functions/src/receiver/interpret';
import { FIXTURE_REGISTRY } from '../support/app';
import { base64Json, envelope } from '../support/push';

/**
 * Properties of the receiver's pure front (receiver/envelope.ts and
 * interpret.ts). The receiver acks what it stored and refuses the rest: a
 * throw here would be a 500 on every redelivery of one poisonous message,
 * and a lossy round trip would store something other than what was sent.
 */

const RUNS = { seed: 20_261_129, numRuns: 500 };

/** Mostly a well-typed value (so the decoder gets past the schema), sometimes any JSON at all. */
const mostly = <T>(good: fc.Arbitrary<T>): fc.Arbitrary<T | fc.JsonValue> =>
  fc.oneof({ arbitrary: good, weight: 19 }, { arbitrary: anyJson, weight: 1 });
const anyJson = fc.jsonValue({ maxDepth: 4 });
/** Completion-like payloads: valid ones, ones with a field off, and any JSON. */
const payloadish = fc.oneof(
  fc.record({
    caseId: fc.string({ minLength: 1, maxLength: 8 }).map((s) => `C-${s}`),
    completedItems: fc.nat(),
    completionTimestamp: fc.constant('2026-11-29T10:00:00+01:00'),
  }),
  fc.record(
    {
      caseId: fc.oneof(fc.string(), fc.constant('C-1')),
      completedItems: fc.oneof(fc.integer(), fc.double()),
      completionTimestamp: fc.oneof(fc.string(), fc.constant('2026-11-29T10:00:00Z')),
      eventId: fc.string(),
    },
    { requiredKeys: [] },
  ),
  anyJson,
);
const envelopeLike = fc.record(
  {
    message: fc.record(
      {
        data: mostly(fc.oneof(payloadish.map(base64Json), fc.base64String(), fc.string())),
        attributes: mostly(
          fc.oneof(
            fc.constant({ eventType: 'TaskCompleted' }),
            fc.dictionary(
              fc.oneof(fc.string(), fc.constant('eventType')),
              fc.oneof(fc.string(), fc.constant('TaskCompleted')),
              { maxKeys: 4 },
            ),
          ),
        ),
        messageId: mostly(fc.string({ minLength: 1 })),
        message_id: mostly(fc.string()),
        publishTime: mostly(
          fc.oneof(
            fc.string(),
            fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          ),
        ),
        orderingKey: mostly(fc.string()),
      },
      { requiredKeys: ['messageId'] },
    ),
    subscription: mostly(fc.string()),
    deliveryAttempt: mostly(fc.nat()),
  },
  { requiredKeys: ['message'] },
);
/** Bodies as the wire delivers them: whatever was sent, through JSON text (so `__proto__` keys arrive as own keys). */
const body = fc
  .oneof({ arbitrary: anyJson, weight: 1 }, { arbitrary: envelopeLike, weight: 4 })
  .map((value) => JSON.parse(JSON.stringify(value)) as unknown);

/** The shape the rest of the receiver relies on, checked field by field. */
function expectWellFormed(e: PushEnvelope): void {
  expect(typeof e.messageId).toBe('string');
  expect(e.messageId.length).toBeGreaterThan(0);
  expect(e.subscription === null || typeof e.subscription === 'string').toBe(true);
  expect(typeof e.data).toBe('string');
  expect(Object.getPrototypeOf(e.attributes)).toBeNull();
  for (const value of Object.values(e.attributes)) expect(typeof value).toBe('string');
  expect(e.publishTime === null || (e.publishTime instanceof Date && !Number.isNaN(e.publishTime.getTime()))).toBe(
    true,
  );
  expect(e.orderingKey === null || typeof e.orderingKey === 'string').toBe(true);
  expect(e.deliveryAttempt === null || (Number.isInteger(e.deliveryAttempt) && e.deliveryAttempt >= 0)).toBe(true);
}

describe('parsePushEnvelope + interpretMessage on arbitrary input', () => {
  test('never throw: every body gives a typed result, every accepted envelope a draft with a valid id', () => {
    fc.assert(
      fc.property(body, (input) => {
        const result = parsePushEnvelope(input);
        if (!result.ok) {
          expect(typeof result.error).toBe('string');
          expect(result.error.length).toBeGreaterThan(0);
          return;
        }
        expectWellFormed(result.envelope);
        const draft = interpretMessage(result.envelope, FIXTURE_REGISTRY, { referenceBuckets: [] });
        expect(draft.id).toMatch(/^[0-9a-f]{40}$/);
        expect(draft.payloadHash).toMatch(/^[0-9a-f]{64}$/);
        // Bounded reason: it is stored on the parked document.
        if (draft.kind === 'invalid') expect(draft.error.length).toBeLessThanOrEqual(2_000 + '… (truncated)'.length);
      }),
      RUNS,
    );
  });

  test('interpretMessage is total on any envelope value (data and attributes arbitrary strings)', () => {
    const attributes = fc.dictionary(
      fc.oneof(fc.string(), fc.constant('eventType')),
      fc.oneof(fc.string(), fc.constant('TaskCompleted')),
    );
    const data = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.base64String(),
      fc.jsonValue().map((v) => base64Json(v)),
    );
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.option(fc.string()),
        data,
        attributes,
        (messageId, subscription, d, attrs) => {
          const e: PushEnvelope = {
            messageId,
            subscription,
            data: d,
            attributes: Object.assign(Object.create(null) as Record<string, string>, attrs),
            publishTime: null,
            orderingKey: null,
            deliveryAttempt: null,
          };
          const draft = interpretMessage(e, FIXTURE_REGISTRY, { referenceBuckets: [] });
          expect(['valid', 'invalid']).toContain(draft.kind);
          if (draft.kind === 'valid') expect(draft.messageName).toBe('TaskCompleted');
        },
      ),
      RUNS,
    );
  });
});

/** A valid TaskCompleted payload: trimmed keys (the schema trims), within the schema's bounds. */
const key = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).filter((s) => s.trim() === s && s.length > 0);
const payloadArb = fc.record(
  {
    caseId: key,
    completedItems: fc.nat(),
    completionTimestamp: fc
      .date({ noInvalidDate: true, min: new Date('0001-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z') })
      .map((d) => d.toISOString()),
    eventId: key,
  },
  { requiredKeys: ['caseId', 'completedItems', 'completionTimestamp'] },
);
const optionsArb = fc.record({
  messageId: fc.string({ minLength: 1, maxLength: 100 }),
  publishTime: fc
    .date({ noInvalidDate: true, min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z') })
    .map((d) => d.toISOString()),
  subscription: fc.string({ maxLength: 100 }),
  extra: fc.dictionary(
    fc.string({ minLength: 1 }).filter((k) => k !== 'eventType'),
    fc.string(),
    { maxKeys: 5 },
  ),
  snakeCase: fc.boolean(),
});

describe('round trip of a valid message', () => {
  test('envelope → JSON wire → parse → decode gives back the exact payload, keys and id', () => {
    fc.assert(
      fc.property(payloadArb, optionsArb, (payload, o) => {
        const sent = envelope({
          data: base64Json(payload),
          attributes: { ...o.extra, eventType: 'TaskCompleted' },
          messageId: o.messageId,
          publishTime: o.publishTime,
          subscription: o.subscription,
        });
        const message = sent['message'] as Record<string, unknown>;
        // Pub/Sub may send snake_case names; both spellings must read the same.
        const wire = o.snakeCase
          ? {
              ...sent,
              message: {
                data: message['data'],
                attributes: message['attributes'],
                message_id: o.messageId,
                publish_time: o.publishTime,
              },
            }
          : sent;
        const parsed = parsePushEnvelope(JSON.parse(JSON.stringify(wire)) as unknown);
        expect(parsed.ok).toBe(true);
        if (!parsed.ok) return;
        expect(parsed.envelope).toMatchObject({
          messageId: o.messageId,
          subscription: o.subscription,
          publishTime: new Date(o.publishTime),
        });
        expect({ ...parsed.envelope.attributes }).toEqual({ ...o.extra, eventType: 'TaskCompleted' });
        expect(decodeBase64(parsed.envelope.data)?.toString('utf8')).toBe(JSON.stringify(payload));

        const draft = interpretMessage(parsed.envelope, FIXTURE_REGISTRY, { referenceBuckets: [] });
        expect(draft.kind).toBe('valid');
        if (draft.kind !== 'valid') return;
        expect(draft.payload).toEqual(payload);
        const dedupKey = payload.eventId ?? `TaskCompleted:${payload.caseId}`;
        expect(draft).toMatchObject({
          correlationKey: payload.caseId,
          dedupKey,
          id: messageDocId('TaskCompleted', payload.caseId, dedupKey),
        });
      }),
      RUNS,
    );
  });

  test('the payload hash ignores key order, whitespace and unknown fields, and sees every known field', () => {
    const withNoise = fc.tuple(
      payloadArb,
      fc.dictionary(
        fc
          .string()
          .filter((k) => !['caseId', 'completedItems', 'completionTimestamp', 'eventId', '__proto__'].includes(k)),
        fc.jsonValue(),
      ),
      fc.integer({ min: 0, max: 4 }),
      fc.nat(),
    );
    fc.assert(
      fc.property(withNoise, ([payload, noise, indent, bump]) => {
        const hashOf = (text: string): string => {
          const parsed = parsePushEnvelope(
            envelope({ data: Buffer.from(text).toString('base64'), attributes: { eventType: 'TaskCompleted' } }),
          );
          if (!parsed.ok) throw new Error(parsed.error);
          const draft = interpretMessage(parsed.envelope, FIXTURE_REGISTRY, { referenceBuckets: [] });
          if (draft.kind !== 'valid') throw new Error(draft.error);
          return draft.payloadHash;
        };
        const reordered = Object.fromEntries([...Object.entries({ ...noise, ...payload })].reverse());
        expect(hashOf(JSON.stringify(reordered, null, indent))).toBe(hashOf(JSON.stringify(payload)));
        // A changed count under the same dedup key must hash differently: that is what turns it into a KEY_COLLISION.
        expect(hashOf(JSON.stringify({ ...payload, completedItems: payload.completedItems + 1 + bump }))).not.toBe(
          hashOf(JSON.stringify(payload)),
        );
      }),
      RUNS,
    );
  });

  test('decodeBase64 inverts Buffer base64 encoding for any bytes, and refuses any text with a character outside base64', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 200 }),
        fc.string({ minLength: 1, maxLength: 5 }).filter((s) => /[^A-Za-z0-9+/=]/.test(s)),
        (bytes, junk) => {
          const text = Buffer.from(bytes).toString('base64');
          expect(decodeBase64(text)?.equals(Buffer.from(bytes))).toBe(true);
          expect(decodeBase64(text + junk)).toBeNull();
          expect(decodeBase64(junk + text)).toBeNull();
        },
      ),
      RUNS,
    );
  });
});
