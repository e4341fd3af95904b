import fc from 'fast-check';
import { type CaseBuilder, type HostileRequest, JSON_HEADERS, type RejectedExpectation } from './envelopes';
import { MESSAGE_NAME } from './payloads';
import { base64, Entries, junkJson, NOT_AN_OBJECT, oddText, textWithLoneSurrogate, toJsonText } from './values';

/**
 * Requests that are not Pub/Sub pushes: one defect each on an otherwise
 * perfect envelope, so the expected refusal is exactly that defect's
 * (functions/src/receiver/envelope.ts and push-endpoint.ts). Nothing of
 * them may reach the inbox.
 */

function reject(
  status: RejectedExpectation['status'],
  error: string,
  by: RejectedExpectation['by'] = 'function',
): RejectedExpectation {
  return { kind: 'rejected', status, error, by };
}

const NOT_PUSH = 'not a Pub/Sub push envelope';

/** A perfect envelope as plain values, so one part can be replaced. */
function perfect(tag: string): { message: Record<string, unknown>; subscription: string } {
  const data = base64(
    JSON.stringify({ caseId: `c-${tag}`, completedItems: 1, completionTimestamp: '2026-11-29T10:00:00Z' }),
  );
  return {
    message: { data, attributes: { eventType: MESSAGE_NAME }, messageId: `m-${tag}` },
    subscription: 'projects/hostile/subscriptions/push',
  };
}

/** The perfect message without its messageId. */
function withoutId(tag: string): Record<string, unknown> {
  return Object.fromEntries(Object.entries(perfect(tag).message).filter(([k]) => k !== 'messageId'));
}

function json(body: unknown, headers: Readonly<Record<string, string>> = JSON_HEADERS): HostileRequest {
  return { method: 'POST', headers, body: Buffer.from(toJsonText(body), 'utf8') };
}

const nonString = fc.oneof(NOT_AN_OBJECT, junkJson()).filter((v) => typeof v !== 'string');

// Over 256 KiB in UTF-8 although under 256 Ki characters; and many tiny attributes, whose pairs cost more than their text.
const oversizedAttributes: fc.Arbitrary<(tag: string) => [unknown, RejectedExpectation]> = fc
  .constantFrom('wide', 'many')
  .map((how) => (tag) => {
    const attributes =
      how === 'wide'
        ? { eventType: MESSAGE_NAME, big: '中'.repeat(90_000) }
        : Object.fromEntries(Array.from({ length: 15_000 }, (_, i) => [`k${i}`, 'v']));
    return [{ message: { ...perfect(tag).message, attributes } }, reject(400, 'attributes exceed')];
  });

/** One part of the envelope replaced by something Pub/Sub never sends: a 400 with the reason. */
const ENVELOPE_DEFECTS: ReadonlyArray<fc.Arbitrary<(tag: string) => [unknown, RejectedExpectation]>> = [
  fc
    .array(junkJson(), { maxLength: 3 })
    .map((items) => (tag) => [[perfect(tag), ...items], reject(400, 'body is not a JSON object')]),
  fc
    .array(fc.tuple(oddText(8), junkJson()), { maxLength: 3 })
    .map((extra) => (tag) => [
      new Entries([['subscription', perfect(tag).subscription], ...extra.filter(([k]) => k !== 'message')]),
      reject(400, NOT_PUSH),
    ]),
  // The message only under "__proto__": an own key after JSON.parse, never an inherited `message`.
  fc.constant((tag: string) => [new Entries([['__proto__', perfect(tag)]]), reject(400, NOT_PUSH)]),
  NOT_AN_OBJECT.map((message) => (tag) => [{ ...perfect(tag), message }, reject(400, NOT_PUSH)]),
  fc.constant((tag: string) => [
    { message: withoutId(tag), subscription: 'projects/hostile/subscriptions/push' },
    reject(400, 'message.messageId is missing'),
  ]),
  fc
    .tuple(
      fc.oneof(nonString, fc.constant(''), fc.constant('m'.repeat(1025))),
      fc.constantFrom('messageId', 'message_id'),
    )
    .map(([id, field]) => (tag) => [{ message: { ...withoutId(tag), [field]: id } }, reject(400, NOT_PUSH)]),
  fc
    .tuple(nonString, fc.constantFrom('data', 'publishTime', 'orderingKey', 'publish_time', 'ordering_key'))
    .map(([value, field]) => (tag) => [
      { message: { ...perfect(tag).message, [field]: value } },
      reject(400, NOT_PUSH),
    ]),
  fc
    .constantFrom<[string, unknown]>(
      ['publishTime', ''],
      ['publishTime', 'x'.repeat(65)],
      ['orderingKey', 'k'.repeat(1025)],
    )
    .map(([field, value]) => (tag) => [
      { message: { ...perfect(tag).message, [field]: value } },
      reject(400, NOT_PUSH),
    ]),
  NOT_AN_OBJECT.filter((v) => v !== null).map((attributes) => (tag) => [
    { message: { ...perfect(tag).message, attributes } },
    reject(400, 'message.attributes is not an object'),
  ]),
  fc.tuple(oddText(8), nonString).map(([k, value]) => (tag) => [
    {
      message: {
        ...perfect(tag).message,
        attributes: new Entries([
          ['eventType', MESSAGE_NAME],
          [`k${k}`, value],
        ]),
      },
    },
    reject(400, 'is not a string'),
  ]),
  oversizedAttributes,
  fc
    .constantFrom('k'.repeat(513), '中'.repeat(171), `CloudPubSubDeadLetterSource${'x'.repeat(500)}`)
    .map((k) => (tag) => [
      { message: { ...perfect(tag).message, attributes: { [k]: 'v' } } },
      reject(400, 'exceeds 512 bytes'),
    ]),
  fc
    .tuple(
      textWithLoneSurrogate(),
      fc.constantFrom('messageId', 'subscription', 'orderingKey', 'ordering_key', 'attributeKey', 'attributeValue'),
    )
    .map(([bad, where]) => (tag) => {
      const { message, subscription } = perfect(tag);
      if (where === 'subscription') return [{ message, subscription: bad }, reject(400, 'not valid Unicode')];
      if (where === 'attributeKey' || where === 'attributeValue') {
        const attributes =
          where === 'attributeKey' ? { eventType: MESSAGE_NAME, [bad]: 'v' } : { eventType: MESSAGE_NAME, k: bad };
        return [{ message: { ...message, attributes }, subscription }, reject(400, 'not valid Unicode')];
      }
      return [
        { message: { ...message, [where]: where === 'messageId' ? `m-${tag}-${bad}` : bad }, subscription },
        reject(400, 'not valid Unicode'),
      ];
    }),
  fc
    .oneof(nonString, fc.constant('s'.repeat(1025)))
    .map((subscription) => (tag) => [{ message: perfect(tag).message, subscription }, reject(400, NOT_PUSH)]),
  fc
    .constantFrom<unknown>(-1, 1.5, '3', true, [], {}, Number.MAX_SAFE_INTEGER + 2)
    .map((deliveryAttempt) => (tag) => [{ ...perfect(tag), deliveryAttempt }, reject(400, NOT_PUSH)]),
  fc.constantFrom('', '{}').map((text) => () => [new RawBody(text), reject(400, NOT_PUSH)]),
];

/** A body written as is (not through the JSON writer). */
class RawBody {
  constructor(readonly text: string) {}
}

/** Envelopes with exactly one defect, as JSON. */
export const envelopeDefect: fc.Arbitrary<CaseBuilder> = // Oversized attributes are 150-270 KB bodies, costly to parse: sent a tenth as often as the other defects.
  fc
    .oneof(...ENVELOPE_DEFECTS.map((arbitrary) => ({ arbitrary, weight: arbitrary === oversizedAttributes ? 1 : 10 })))
    .map((build) => (tag) => {
      const [body, expected] = build(tag);
      return {
        request:
          body instanceof RawBody
            ? { method: 'POST', headers: JSON_HEADERS, body: Buffer.from(body.text) }
            : json(body),
        expected,
      };
    });

const OTHER_TYPES = [
  undefined,
  'text/plain',
  'text/plain; charset=utf-8',
  'application/octet-stream',
  'application/xml',
  'application/vnd.api+json',
  'application/json-seq',
  'multipart/form-data; boundary=x',
  'image/png',
  'text/json',
];

/** A perfect envelope (or junk) under a content type other than JSON: the function gets text or bytes, not an object. */
export const wrongContentType: fc.Arbitrary<CaseBuilder> = fc
  .tuple(fc.constantFrom(...OTHER_TYPES), fc.boolean(), oddText(30))
  .map(([type, envelope, junk]) => (tag) => {
    const text = envelope ? JSON.stringify(perfect(tag)) : `${junk}x`;
    const headers: Record<string, string> = type === undefined ? {} : { 'content-type': type };
    return {
      request: { method: 'POST', headers, body: Buffer.from(text, 'utf8') },
      expected: reject(400, 'body is not a JSON object'),
    };
  });

/** Form bodies that parse into something other than an envelope (the same messageId twice becomes a list). */
export const formNotEnvelope: fc.Arbitrary<CaseBuilder> = fc
  .constantFrom(
    'a=1&b=2',
    'message=hello',
    'message[messageId]=a&message[messageId]=b',
    '=&&=',
    'message[attributes]=x&message[messageId]=m',
  )
  .map((text) => () => ({
    request: {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: Buffer.from(text),
    },
    expected: reject(400, NOT_PUSH),
  }));

/** Anything but POST: 405. */
export const wrongMethod: fc.Arbitrary<CaseBuilder> = fc
  .constantFrom('GET', 'PUT', 'DELETE', 'PATCH')
  .map((method) => (tag) => ({
    request: {
      method,
      headers: JSON_HEADERS,
      body: method === 'GET' ? Buffer.alloc(0) : Buffer.from(JSON.stringify(perfect(tag))),
    },
    expected: reject(405, 'use POST'),
  }));

/** A perfect envelope just over the size limit: 413 before anything is read. */
export function tooLarge(maxBodyBytes: number): fc.Arbitrary<CaseBuilder> {
  return fc.constant((tag: string) => {
    const { message, subscription } = perfect(tag);
    const body = JSON.stringify({
      message: { ...message, data: base64('x'.repeat(Math.ceil((maxBodyBytes * 3) / 4))) },
      subscription,
    });
    return {
      request: { method: 'POST', headers: JSON_HEADERS, body: Buffer.from(body) },
      expected: reject(413, 'exceeds'),
    };
  });
}

/**
 * Bodies the Functions Framework's body parser refuses before the function
 * runs (malformed JSON, a JSON scalar, an unsupported charset or encoding, a
 * form over qs's limits). Its default error page answers them: 4xx, but
 * text/html, not JSON. Nothing the function can change.
 */
export const frameworkRefusal: fc.Arbitrary<CaseBuilder> = fc
  .tuple(
    fc.constantFrom('cut', 'scalar', 'syntax', 'charset', 'gzip', 'encoding', 'params', 'depth'),
    fc.nat(),
    fc.constantFrom('"hello"', '42', 'null', 'true', '"\\ud800"'),
    fc.constantFrom("{'message':{}}", '{"message":{},}', '{"message":"\u0000', '\u0000', '{"a":1}}', 'NaN'),
  )
  .map(([how, at, scalar, syntax]) => (tag): ReturnType<CaseBuilder> => {
    const env = JSON.stringify(perfect(tag));
    const body = (text: string, headers: Record<string, string> = JSON_HEADERS, status: 400 | 413 | 415 = 400) => ({
      request: { method: 'POST', headers, body: Buffer.from(text) },
      expected: reject(status, '', 'framework'),
    });
    switch (how) {
      case 'cut':
        return body(env.slice(0, 1 + (at % (env.length - 1))));
      case 'scalar':
        return body(scalar);
      case 'syntax':
        return body(syntax);
      case 'charset':
        return body(
          env,
          {
            'content-type': `application/json; charset=${['latin1', 'iso-8859-1', 'windows-1252', 'x-unknown'][at % 4] ?? 'latin1'}`,
          },
          415,
        );
      case 'gzip':
        return body(env, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      case 'encoding':
        return body(env, { 'content-type': 'application/json', 'content-encoding': 'x-custom' }, 415);
      case 'params':
        return body(
          Array.from({ length: 1_001 }, (_, i) => `p${i}=1`).join('&'),
          { 'content-type': 'application/x-www-form-urlencoded' },
          413,
        );
      case 'depth':
        return body(`a${'[b]'.repeat(40)}=1`, { 'content-type': 'application/x-www-form-urlencoded' });
    }
  });
