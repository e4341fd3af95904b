import fc from 'fast-check';
import { invalidDocId, messageDocId } from '../../../functions/src/inbox/ids';
import { MESSAGE_NAME, type PayloadBuilder, type Verdict } from './payloads';
import { Entries, junkJson, oddText, PROTO_KEYS, toJsonText } from './values';

/**
 * Well-formed push envelopes around generated payloads: odd ids, both JSON
 * spellings, 100+ attributes, prototype-ish keys at envelope and message
 * level, dead-letter source attributes. Each comes with the document the
 * inbox must hold afterwards.
 */

/** The endpoint under test: `receivePubSubPush` or `receiveDeadLetter`. */
export type Endpoint = 'receiver' | 'deadLetter';

/** One HTTP request, exactly as sent. */
export interface HostileRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** An attribute as the inbox stores it (`source.attributes` is a list of pairs sorted by key). */
export interface StoredAttribute {
  readonly key: string;
  readonly value: string;
}

/** A well-formed envelope: answered 2xx, and exactly this document is in the inbox. */
export interface StoredExpectation {
  readonly kind: 'stored';
  readonly id: string;
  readonly messageId: string;
  /** `source.subscription` (for a dead letter: the subscription it came from). */
  readonly subscription: string | null;
  readonly attributes: readonly StoredAttribute[];
  /** `deadLetter.attributes` (the CloudPubSubDeadLetterSource* ones); null for the receiver. */
  readonly deadLetterAttributes: Readonly<Record<string, string>> | null;
  /** The name the message claimed (eventType), kept on a parked document. */
  readonly messageName: string | null;
  readonly verdict: Verdict;
}

/** Not a push at all: refused, nothing stored. `by: 'framework'` when the Functions Framework's body parser answers before the function runs. */
export interface RejectedExpectation {
  readonly kind: 'rejected';
  readonly status: 400 | 405 | 413 | 415;
  /** Part of the error text. */
  readonly error: string;
  readonly by: 'function' | 'framework';
}

export type Expected = StoredExpectation | RejectedExpectation;

export const DL_PREFIX = 'CloudPubSubDeadLetterSource';
const RESERVED_ENVELOPE_KEYS = new Set(['message', 'subscription', 'deliveryAttempt']);
const RESERVED_MESSAGE_KEYS = new Set([
  'data',
  'attributes',
  'messageId',
  'message_id',
  'publishTime',
  'publish_time',
  'orderingKey',
  'ordering_key',
]);

const key = fc.oneof(fc.constantFrom(...PROTO_KEYS), oddText(12));
const attribute = fc.tuple(key, oddText(20));
const extraEntries = (reserved: ReadonlySet<string>) =>
  fc.array(fc.tuple(key, junkJson()), { maxLength: 3 }).map((e) => e.filter(([k]) => !reserved.has(k)));

/** Everything around the payload. Odd text is well-formed: Pub/Sub cannot carry lone surrogates (those are refused, see not-a-push.ts). */
const envelopeParts = fc.record({
  idText: oddText(20),
  spelling: fc.constantFrom('camel', 'snake', 'both'),
  subscription: fc.option(fc.oneof(fc.constant('projects/hostile/subscriptions/push'), fc.constant(''), oddText(20)), {
    nil: undefined,
  }),
  publishTime: fc.option(
    fc.oneof(
      fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
      oddText(12).map((t) => `t${t}`),
      fc.constantFrom(
        '0000-01-01T00:00:00Z',
        '+275760-09-13T00:00:00.000Z',
        '-000001-01-01T00:00:00Z',
        '9999-12-31T23:59:59.999Z',
      ),
    ),
    { nil: undefined },
  ),
  orderingKey: fc.option(oddText(20), { nil: undefined }),
  deliveryAttempt: fc.option(fc.oneof(fc.constant(null), fc.nat(), fc.constant(Number.MAX_SAFE_INTEGER)), {
    nil: undefined,
  }),
  envelopeExtras: extraEntries(RESERVED_ENVELOPE_KEYS),
  messageExtras: extraEntries(RESERVED_MESSAGE_KEYS),
  extrasFirst: fc.boolean(),
});

/** Attributes besides eventType: a few, or 100 to 200 (Pub/Sub allows 100). Never eventType or a dead-letter key. */
export function extraAttributes(many: boolean): fc.Arbitrary<ReadonlyArray<readonly [string, string]>> {
  return fc
    .uniqueArray(attribute, { minLength: many ? 100 : 0, maxLength: many ? 200 : 5, selector: ([k]) => k })
    .map((list) => list.filter(([k]) => k !== 'eventType' && !k.startsWith(DL_PREFIX)));
}

/** The attributes Pub/Sub adds to a dead-lettered message, some missing or odd, plus unexpected ones under the prefix. */
const deadLetterSource = fc
  .record({
    subscription: fc.option(
      fc.oneof(fc.constant('fixture-results-push'), fc.constant('projects/p/subscriptions/s'), oddText(16)),
      { nil: undefined },
    ),
    project: fc.option(fc.oneof(fc.constant('test'), oddText(8)), { nil: undefined }),
    count: fc.option(fc.oneof(fc.nat(100).map(String), fc.constantFrom('NaN', '1e400', '-3', '', ' 7 ')), {
      nil: undefined,
    }),
    publishTime: fc.option(fc.constant('2026-11-29T10:00:00Z'), { nil: undefined }),
    odd: fc.uniqueArray(fc.oneof(fc.constantFrom(...PROTO_KEYS, '', '.a.b', '`x`', 'x'.repeat(400)), oddText(10)), {
      maxLength: 3,
    }),
  })
  .map((s) => {
    const entries: Array<readonly [string, string]> = [];
    if (s.subscription !== undefined) entries.push([`${DL_PREFIX}Subscription`, s.subscription]);
    if (s.project !== undefined) entries.push([`${DL_PREFIX}SubscriptionProject`, s.project]);
    if (s.count !== undefined) entries.push([`${DL_PREFIX}DeliveryCount`, s.count]);
    if (s.publishTime !== undefined) entries.push([`${DL_PREFIX}TopicPublishTime`, s.publishTime]);
    for (const suffix of s.odd)
      if (!['Subscription', 'SubscriptionProject', 'DeliveryCount', 'TopicPublishTime'].includes(suffix))
        entries.push([`${DL_PREFIX}${suffix}`, suffix]);
    return entries;
  });

/** The subscription a dead letter is filed under: Pub/Sub's source attributes when present (see functions/src/deadletter/source.ts). */
function deadLetterSubscription(
  attributes: ReadonlyMap<string, string>,
  envelopeSubscription: string | null,
): string | null {
  const subscription = attributes.get(`${DL_PREFIX}Subscription`);
  const project = attributes.get(`${DL_PREFIX}SubscriptionProject`);
  if (subscription === undefined) return envelopeSubscription;
  return subscription.startsWith('projects/') || project === undefined
    ? subscription
    : `projects/${project}/subscriptions/${subscription}`;
}

function sortedPairs(entries: Iterable<readonly [string, string]>): StoredAttribute[] {
  return [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, value]) => ({ key: k, value }));
}

/** What the inbox must hold for a stored envelope with these parts. */
export function storedExpectation(
  endpoint: Endpoint,
  messageId: string,
  subscription: string | null,
  attributes: ReadonlyMap<string, string>,
  verdict: Verdict,
): StoredExpectation {
  const dl = endpoint === 'deadLetter';
  const original = [...attributes].filter(([k]) => !dl || !k.startsWith(DL_PREFIX));
  const storedSubscription = dl ? deadLetterSubscription(attributes, subscription) : subscription;
  return {
    kind: 'stored',
    id: verdict.valid
      ? messageDocId(MESSAGE_NAME, verdict.correlationKey, verdict.dedupKey)
      : invalidDocId(storedSubscription, messageId),
    messageId,
    subscription: storedSubscription,
    attributes: sortedPairs(original),
    deadLetterAttributes: dl ? Object.fromEntries([...attributes].filter(([k]) => k.startsWith(DL_PREFIX))) : null,
    messageName: attributes.get('eventType') ?? null,
    verdict,
  };
}

/** A built case before it is numbered. */
export interface CaseDraft {
  readonly request: HostileRequest;
  readonly expected: Expected;
}

/** Builds a case from the tag that makes its identifiers unique. */
export type CaseBuilder = (tag: string) => CaseDraft;

export const JSON_HEADERS = { 'content-type': 'application/json' };

/** JSON push envelopes around `payloads`; `manyAttributes` gives each 100 to 200 attributes. */
export function wellFormedEnvelope(
  endpoint: Endpoint,
  payloads: fc.Arbitrary<PayloadBuilder>,
  manyAttributes = false,
): fc.Arbitrary<CaseBuilder> {
  const source = endpoint === 'deadLetter' ? deadLetterSource : fc.constant([]);
  return fc
    .tuple(payloads, envelopeParts, extraAttributes(manyAttributes), source)
    .map(([payload, p, extra, dlSource]) => (tag) => {
      const { data, eventType, verdict } = payload(tag);
      const messageId = `m-${tag}-${p.idText}`;
      const attributes = new Map<string, string>([...extra, ...dlSource]);
      if (eventType !== undefined) attributes.set('eventType', eventType);
      const snake = p.spelling === 'snake';
      const message: Array<readonly [string, unknown]> = [];
      if (data !== undefined) message.push(['data', data]);
      message.push(['attributes', new Entries([...attributes])]);
      // "both": Pub/Sub's JSON mapping writes both spellings; messageId wins, so a different message_id must not matter.
      message.push(snake ? ['message_id', messageId] : ['messageId', messageId]);
      if (p.spelling === 'both') message.push(['message_id', `decoy-${tag}`]);
      if (p.publishTime !== undefined) message.push([snake ? 'publish_time' : 'publishTime', p.publishTime]);
      if (p.orderingKey !== undefined) message.push([snake ? 'ordering_key' : 'orderingKey', p.orderingKey]);
      const envelope: Array<readonly [string, unknown]> = [
        ['message', new Entries(p.extrasFirst ? [...p.messageExtras, ...message] : [...message, ...p.messageExtras])],
      ];
      if (p.subscription !== undefined) envelope.push(['subscription', p.subscription]);
      if (p.deliveryAttempt !== undefined) envelope.push(['deliveryAttempt', p.deliveryAttempt]);
      const body = toJsonText(
        new Entries(p.extrasFirst ? [...p.envelopeExtras, ...envelope] : [...envelope, ...p.envelopeExtras]),
      );
      return {
        request: { method: 'POST', headers: JSON_HEADERS, body: Buffer.from(body, 'utf8') },
        expected: storedExpectation(endpoint, messageId, p.subscription ?? null, attributes, verdict),
      };
    });
}

/** Form-encoded envelopes: the Functions Framework parses them (qs, prototype keys kept except `__proto__`), and the function accepts what parses into an envelope. */
export function formEnvelope(endpoint: Endpoint, payloads: fc.Arbitrary<PayloadBuilder>): fc.Arbitrary<CaseBuilder> {
  const formKey = fc.constantFrom('region', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'x_y');
  return fc
    .tuple(
      payloads,
      fc.uniqueArray(fc.tuple(formKey, oddText(12)), { maxLength: 4, selector: ([k]) => k }),
      fc.boolean(),
      oddText(12),
    )
    .map(([payload, extra, withProto, idText]) => (tag) => {
      const { data, eventType, verdict } = payload(tag);
      const messageId = `m-${tag}-${idText}`;
      const form = new URLSearchParams();
      form.append('message[messageId]', messageId);
      if (data !== undefined) form.append('message[data]', data);
      const attributes = new Map<string, string>(extra);
      if (eventType !== undefined) attributes.set('eventType', eventType);
      for (const [k, v] of attributes) form.append(`message[attributes][${k}]`, v);
      // qs drops these rather than touching a prototype: they must not show up anywhere.
      if (withProto)
        ['message[attributes][__proto__]=x', '__proto__[polluted]=1', 'constructor[prototype][polluted]=1'].forEach(
          (pair) => form.append(...(pair.split('=') as [string, string])),
        );
      form.append('subscription', 'projects/hostile/subscriptions/form');
      return {
        request: {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: Buffer.from(form.toString(), 'utf8'),
        },
        expected: storedExpectation(endpoint, messageId, 'projects/hostile/subscriptions/form', attributes, verdict),
      };
    });
}
