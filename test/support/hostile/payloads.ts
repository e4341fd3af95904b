import fc from 'fast-check';
import {
  base64,
  deepJson,
  Entries,
  junkJson,
  NOT_AN_OBJECT,
  oddText,
  PROTO_KEYS,
  RawJson,
  textWithLoneSurrogate,
  toJsonText,
} from './values';

/**
 * Payloads (the `data` of a push) with the verdict the inbox must reach on
 * each, written down from the receiver's rules (functions/src/receiver/
 * interpret.ts): checks run in the order base64, message name, UTF-8, JSON,
 * schema, well-formed text, and the first that fails is the reason.
 */

export const MESSAGE_NAME = 'TaskCompleted';

/** What the inbox must make of a payload. */
export type Verdict =
  | {
      readonly valid: true;
      readonly payload: Readonly<Record<string, unknown>>;
      readonly correlationKey: string;
      readonly dedupKey: string;
    }
  | {
      readonly valid: false;
      readonly error: string;
      readonly raw: Buffer;
      readonly form: 'DECODED' | 'UNDECODABLE_BASE64';
    };

/** A payload ready for an envelope: the `data` field (undefined: left out), the eventType attribute (undefined: none) and the verdict. */
export interface PayloadCase {
  readonly data: string | undefined;
  readonly eventType: string | undefined;
  readonly verdict: Verdict;
}

/** Builds a payload whose identifiers contain `tag`, so every generated message is a distinct event. */
export type PayloadBuilder = (tag: string) => PayloadCase;

const PAD = fc.constantFrom('', ' ', '\t\n', '\u3000', '\u00a0', '\ufeff ');

/** ISO 8601 timestamps the schema accepts: with and without millis, with an offset, with microseconds. */
const timestamp = fc
  .tuple(
    fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }),
    fc.integer({ min: 0, max: 3 }),
    fc.integer({ min: -14 * 60, max: 14 * 60 }),
  )
  .map(([date, form, offset]) => {
    const iso = date.toISOString();
    if (form === 0) return iso;
    if (form === 1) return `${iso.slice(0, 19)}Z`;
    if (form === 2) return `${iso.slice(0, 23)}123Z`;
    const local = new Date(date.getTime() + offset * 60_000).toISOString().slice(0, 19);
    const abs = Math.abs(offset);
    return `${local}${offset < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  });

const items = fc.oneof(fc.constant(0), fc.nat(1_000), fc.constant(Number.MAX_SAFE_INTEGER));
const FIELDS = new Set(['caseId', 'completedItems', 'completionTimestamp', 'eventId']);
/** Unknown payload fields, prototype-ish keys first among them; the schema drops them all. */
const extras = fc
  .array(fc.tuple(fc.oneof(fc.constantFrom(...PROTO_KEYS), oddText(10)), junkJson()), { maxLength: 4 })
  .map((e) => e.filter(([k]) => !FIELDS.has(k)));

/** The pieces of a valid completion; odd text stays well-formed, pads are trimmed by the schema. */
const completionParts = fc.record({
  pads: fc.tuple(PAD, PAD, PAD, PAD),
  caseText: oddText(40),
  eventText: fc.option(oddText(40), { nil: undefined }),
  completedItems: items,
  itemsAsFloat: fc.boolean(),
  completionTimestamp: timestamp,
  extras,
  extrasFirst: fc.boolean(),
  shadowedFirst: fc.option(junkJson(), { nil: undefined }),
  // 10,000 levels of nesting in an unknown field, in one payload of twenty (60 KB each: the run's time goes by bytes).
  deep: fc.oneof(
    { weight: 19, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: fc.constantFrom<'array' | 'object'>('array', 'object') },
  ),
  bom: fc.boolean(),
});
type CompletionParts = typeof completionParts extends fc.Arbitrary<infer T> ? T : never;

/** A valid completion's JSON text, and the payload the schema makes of it. */
function completionText(
  p: CompletionParts,
  tag: string,
  extraEntries: ReadonlyArray<readonly [string, unknown]> = [],
): { text: string; verdict: Verdict } {
  const caseId = `${p.pads[0]}c-${tag}-${p.caseText}${p.pads[1]}`;
  const eventId = p.eventText === undefined ? undefined : `${p.pads[2]}ev-${tag}-${p.eventText}${p.pads[3]}`;
  const fields: Array<readonly [string, unknown]> = [
    // A duplicate key: JSON.parse keeps the last one, so this first value must not count.
    ...(p.shadowedFirst === undefined ? [] : [['caseId', p.shadowedFirst] as const]),
    ['caseId', caseId],
    [
      'completedItems',
      p.itemsAsFloat && p.completedItems < 1e15 ? new RawJson(`${p.completedItems}.0`) : p.completedItems,
    ],
    ['completionTimestamp', p.completionTimestamp],
    ...(eventId === undefined ? [] : [['eventId', eventId] as const]),
  ];
  const unknown = [
    ...p.extras,
    ...(p.deep === undefined ? [] : [['nested', deepJson(10_000, p.deep)] as const]),
    ...extraEntries,
  ];
  const text = toJsonText(new Entries(p.extrasFirst ? [...unknown, ...fields] : [...fields, ...unknown]));
  const payload: Record<string, unknown> = {
    caseId: caseId.trim(),
    completedItems: p.completedItems,
    completionTimestamp: p.completionTimestamp,
  };
  if (eventId !== undefined) payload.eventId = eventId.trim();
  const dedupKey = eventId === undefined ? `${MESSAGE_NAME}:${caseId.trim()}` : eventId.trim();
  return {
    text: `${p.bom ? '\ufeff' : ''}${text}`,
    verdict: { valid: true, payload, correlationKey: caseId.trim(), dedupKey },
  };
}

function invalid(error: string, raw: Buffer, form: 'DECODED' | 'UNDECODABLE_BASE64' = 'DECODED'): Verdict {
  return { valid: false, error, raw, form };
}

/** Valid completions (a UTF-8 BOM before the JSON is allowed: the decoder drops it). */
export const validCompletion: fc.Arbitrary<PayloadBuilder> = completionParts.map((p) => (tag) => {
  const { text, verdict } = completionText(p, tag);
  return { data: base64(text), eventType: MESSAGE_NAME, verdict };
});

/** A valid completion carrying an unknown field of `bytes` characters: stored, the field dropped. */
export function hugeValidCompletion(bytes: number): fc.Arbitrary<PayloadBuilder> {
  return completionParts.map((p) => (tag) => {
    const { text, verdict } = completionText({ ...p, deep: undefined }, tag, [['padding', 'x'.repeat(bytes)]]);
    return { data: base64(text), eventType: MESSAGE_NAME, verdict };
  });
}

const claim = fc.oneof(fc.constant(MESSAGE_NAME), fc.constant(undefined), oddText(12));
const NOT_BASE64 = ['-', '_', '!', ' ', '\n', '.', '*', 'é', '\u0000', '中', '\u{1F600}', '%', '='];

/** Base64 made invalid by one foreign character, stray padding or a wrong length: kept as received text. */
export const badBase64: fc.Arbitrary<PayloadBuilder> = fc
  .tuple(completionParts, claim, fc.constantFrom(...NOT_BASE64), fc.nat(), fc.constantFrom('insert', 'pad', 'cut'))
  .map(([p, eventType, bad, at, how]) => (tag) => {
    const good = base64(completionText(p, tag).text);
    const pos = at % good.length;
    const data =
      how === 'insert'
        ? `${good.slice(0, pos)}${bad}${good.slice(pos)}`
        : how === 'pad'
          ? `${good}====`
          : good.slice(0, -1);
    return {
      data,
      eventType,
      verdict: invalid('message.data is not valid base64', Buffer.from(data, 'utf8'), 'UNDECODABLE_BASE64'),
    };
  });

/** Readable JSON, but no attribute names a message type. */
export const nameMissing: fc.Arbitrary<PayloadBuilder> = fc
  .tuple(completionParts, fc.boolean())
  .map(([p, asJunk]) => (tag) => {
    const text = asJunk ? `{"tag":${JSON.stringify(tag)}}` : completionText(p, tag).text;
    return {
      data: base64(text),
      eventType: undefined,
      verdict: invalid('message name missing', Buffer.from(text, 'utf8')),
    };
  });

/** An eventType no registry entry has: near misses, prototype keys, odd text, and names too long to quote whole. */
export const unknownName: fc.Arbitrary<PayloadBuilder> = fc
  .tuple(
    completionParts,
    fc.oneof(
      fc.constantFrom(
        'taskcompleted',
        'TaskCompleted ',
        ' TaskCompleted',
        '\u200fTaskCompleted',
        'Task\u0000Completed',
        '',
        ...PROTO_KEYS,
      ),
      oddText(30),
      fc.constantFrom('\u{1F600}'.repeat(1_500), `x${'\u{1F600}'.repeat(1_500)}`),
    ),
  )
  .filter(([, name]) => name !== MESSAGE_NAME)
  .map(([p, name]) => (tag) => {
    const text = completionText(p, tag).text;
    return { data: base64(text), eventType: name, verdict: invalid('unknown message name', Buffer.from(text, 'utf8')) };
  });

const BAD_UTF8 = [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xc0, 0xaf], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xe2, 0x82]];

/** Valid base64 of bytes that are not UTF-8 (stray bytes, overlong forms, CESU-8 surrogates, truncated sequences). */
export const notUtf8: fc.Arbitrary<PayloadBuilder> = fc
  .tuple(completionParts, fc.constantFrom(...BAD_UTF8), fc.nat())
  .map(([p, bad, at]) => (tag) => {
    const bytes = Buffer.from(completionText(p, tag).text, 'utf8');
    const pos = at % bytes.length;
    const raw = Buffer.concat([bytes.subarray(0, pos), Buffer.from(bad), bytes.subarray(pos)]);
    return {
      data: raw.toString('base64'),
      eventType: MESSAGE_NAME,
      verdict: invalid('message.data is not UTF-8 text', raw),
    };
  });

/** UTF-8 text that is not JSON: cut-off objects, JavaScript-isms, emoji (V8 quotes half a surrogate pair in its error), nothing at all. */
export const notJson: fc.Arbitrary<PayloadBuilder> = fc
  .tuple(
    completionParts,
    fc.nat(),
    fc.constantFrom('cut', 'emoji', 'js', 'empty', 'absent'),
    fc.constantFrom("{'a':1}", '{"a":1,}', '{}x', 'NaN', 'undefined', '\u0000', '\ufeff\ufeff{}'),
  )
  .map(([p, at, how, js]) => (tag) => {
    const full = completionText({ ...p, bom: false }, tag).text;
    const text =
      how === 'cut'
        ? full.slice(0, 1 + (at % (full.length - 1)))
        : how === 'emoji'
          ? `${'x'.repeat(at % 12)}${'\u{1F600}'.repeat(30)}${tag}`
          : how === 'js'
            ? js
            : '';
    return {
      data: how === 'absent' ? undefined : base64(text),
      eventType: MESSAGE_NAME,
      verdict: invalid('message.data is not JSON', Buffer.from(text, 'utf8')),
    };
  });

/** One field broken at a time, or no object at all: JSON, but not a TaskCompleted. */
const SCHEMA_BREAKS: ReadonlyArray<readonly [string, fc.Arbitrary<unknown>]> = [
  [
    'caseId',
    fc.oneof(
      fc.constantFrom(null, 42, true, '', '   ', '\u3000', 'x'.repeat(300)),
      NOT_AN_OBJECT.filter((v) => typeof v !== 'string'),
      junkJson().filter((v) => typeof v !== 'string'),
    ),
  ],
  ['completedItems', fc.constantFrom(-1, 1.5, '3', null, 1e300, true, [], {}, Number.MAX_SAFE_INTEGER + 1)],
  [
    'completionTimestamp',
    fc.constantFrom(
      'now',
      '2026-02-30T10:00:00Z',
      '2026-11-29',
      '',
      0,
      null,
      '2026-11-29T25:00:00Z',
      '2026-11-29 10:00:00Z',
    ),
  ],
  ['eventId', fc.constantFrom(42, null, '', '  ', 'e'.repeat(257), [])],
];

export const schemaViolation: fc.Arbitrary<PayloadBuilder> = fc
  .tuple(completionParts, fc.nat(), fc.constantFrom('field', 'missing', 'notObject', 'protoWrapped'), NOT_AN_OBJECT)
  .chain(([p, which, how, notObject]) => {
    const [field, broken] = SCHEMA_BREAKS[which % SCHEMA_BREAKS.length] ?? SCHEMA_BREAKS[0]!;
    return broken.map((value) => (tag: string): PayloadCase => {
      const fields = JSON.parse(
        completionText({ ...p, extras: [], deep: undefined, shadowedFirst: undefined, bom: false }, tag).text,
      ) as Record<string, unknown>;
      let body: unknown;
      if (how === 'field') body = { ...fields, [field]: value };
      else if (how === 'missing')
        body = new Entries(Object.entries(fields).filter(([k]) => k !== (field === 'eventId' ? 'caseId' : field)));
      // The fields under "__proto__": an own key after JSON.parse, so they are not inherited and are missing.
      else if (how === 'protoWrapped') body = new Entries([['__proto__', fields]]);
      else body = notObject;
      const text = toJsonText(body);
      return {
        data: base64(text),
        eventType: MESSAGE_NAME,
        verdict: invalid(`${MESSAGE_NAME} does not match its schema`, Buffer.from(text, 'utf8')),
      };
    });
  });

/** A "\udXXX" escape in an identifier: valid JSON and schema, but text Firestore cannot store. */
export const loneSurrogateInPayload: fc.Arbitrary<PayloadBuilder> = fc
  .tuple(completionParts, textWithLoneSurrogate(), fc.boolean())
  .map(([p, bad, inEvent]) => (tag) => {
    const fields = JSON.parse(
      completionText({ ...p, extras: [], deep: undefined, shadowedFirst: undefined, bom: false }, tag).text,
    ) as Record<string, unknown>;
    const text = toJsonText({ ...fields, [inEvent ? 'eventId' : 'caseId']: `id-${tag}-${bad}` });
    return {
      data: base64(text),
      eventType: MESSAGE_NAME,
      verdict: invalid('is not valid Unicode (lone surrogate)', Buffer.from(text, 'utf8')),
    };
  });

/** `bytes` of data that is not JSON: kept in rawChunks when larger than a document may hold. */
export function hugeInvalid(bytes: number): fc.Arbitrary<PayloadBuilder> {
  return fc.constantFrom('{', '[', 'x').map((start) => (tag) => {
    const text = `${start}${JSON.stringify(tag)}${'y'.repeat(bytes)}`;
    return {
      data: base64(text),
      eventType: MESSAGE_NAME,
      verdict: invalid('message.data is not JSON', Buffer.from(text, 'utf8')),
    };
  });
}
