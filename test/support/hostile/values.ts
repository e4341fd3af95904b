import fc from 'fast-check';

/**
 * Building blocks of hostile input: odd text, prototype-ish keys, JSON
 * fragments too deep for JSON.stringify, and a serializer that writes them
 * all as JSON text (so the receiver's parsers see exactly what a hostile
 * sender would send, `__proto__` keys and lone-surrogate escapes included).
 */

/** Keys that would pollute or shadow something if an object were merged carelessly. */
export const PROTO_KEYS = [
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  '__defineGetter__',
  'isPrototypeOf',
] as const;

/** Characters that break naive code: NUL, controls, bidi overrides, zero-width, BOM, combining marks, emoji (with ZWJ), JSON and path syntax. */
const ODD_UNITS = [
  '\u0000',
  '\u0001',
  '\u001f',
  '\u007f',
  '\n',
  '\r',
  '\t',
  '\u2028',
  '\u2029',
  '\u200f',
  '\u200e',
  '\u202e',
  '\u2066',
  '\u200b',
  '\u200d',
  '\ufeff',
  '\u0301',
  '\u0338',
  '\u{1F600}',
  '\u{1F469}\u200d\u{1F4BB}',
  '\u{1F1E9}\u{1F1EA}',
  '\u{10FFFF}',
  '\uffff',
  '\ufffd',
  '中',
  'é',
  'ß',
  'İ',
  'ﬃ',
  '"',
  '\\',
  '/',
  '.',
  '`',
  '$',
  '%',
  '{',
  '}',
  '[',
  ']',
  ':',
  ',',
  '=',
  '&',
  '?',
  '#',
  ' ',
  '\u3000',
  '\u00a0',
];

/** One unit of text: mostly plain, often odd, sometimes any code point (valid pairs only). */
const unit = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...'abcXYZ019-_'.split('')) },
  { weight: 3, arbitrary: fc.constantFrom(...ODD_UNITS) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
);

/** Odd but well-formed Unicode text (no lone surrogates): what Pub/Sub itself can carry. */
export function oddText(maxLength = 24): fc.Arbitrary<string> {
  return fc.string({ unit, maxLength });
}

/** Unpaired UTF-16 surrogates: JSON can escape them ("\ud800"), valid UTF-8 cannot carry them. */
export const LONE_SURROGATES = ['\ud800', '\udbff', '\udc00', '\udfff'] as const;

/** Text with at least one lone surrogate somewhere in it. */
export function textWithLoneSurrogate(): fc.Arbitrary<string> {
  return fc.tuple(oddText(8), fc.constantFrom(...LONE_SURROGATES), oddText(8)).map(([a, s, b]) => `${a}${s}${b}`);
}

/** A JSON fragment written verbatim by {@link toJsonText} (for nesting deeper than JSON.stringify can recurse). */
export class RawJson {
  constructor(readonly text: string) {}
}

/** `depth` nested arrays or objects, e.g. 10,000 levels: [[[...]]] or {"a":{"a":...}}. */
export function deepJson(depth: number, kind: 'array' | 'object'): RawJson {
  return kind === 'array'
    ? new RawJson(`${'['.repeat(depth)}${']'.repeat(depth)}`)
    : new RawJson(`${'{"a":'.repeat(depth)}0${'}'.repeat(depth)}`);
}

/** An object given as a list of entries, so keys may repeat or be `__proto__` and still be written out. */
export class Entries {
  constructor(readonly entries: ReadonlyArray<readonly [string, unknown]>) {}
}

/**
 * JSON text of a value that may hold {@link RawJson} fragments and
 * {@link Entries} objects. Strings go through JSON.stringify, which writes a
 * lone surrogate as an escape ("\ud800"); a parser turns it back into one.
 */
export function toJsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (value instanceof Entries)
    return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`).join(',')}}`;
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`;
  if (typeof value === 'object' && value !== null) return toJsonText(new Entries(Object.entries(value)));
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify returns undefined for undefined, a function or a symbol; lib.d.ts says string
  return JSON.stringify(value) ?? 'null';
}

/** Any JSON-ish value, small, with odd keys and strings; objects may carry prototype-ish keys. */
export function junkJson(): fc.Arbitrary<unknown> {
  const key = fc.oneof(fc.constantFrom(...PROTO_KEYS), oddText(10));
  const leaf = fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    oddText(16),
  );
  const { tree } = fc.letrec<{ tree: unknown }>((tie) => ({
    tree: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      leaf,
      fc.array(tie('tree'), { maxLength: 3 }),
      fc.array(fc.tuple(key, tie('tree')), { maxLength: 3 }).map((entries) => new Entries(entries)),
      fc.constant(
        new Entries([
          ['polluted', true],
          ['isAdmin', true],
        ]),
      ),
    ),
  }));
  return tree;
}

/** A JSON value that is not an object: what a sender may put where an object belongs; one in ~20 is 10,000 nested arrays. */
export const NOT_AN_OBJECT: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(null) },
  { weight: 4, arbitrary: fc.boolean() },
  { weight: 4, arbitrary: fc.integer() },
  { weight: 4, arbitrary: oddText(12) },
  { weight: 4, arbitrary: fc.array(fc.integer(), { maxLength: 3 }) },
  { weight: 1, arbitrary: fc.constant(deepJson(10_000, 'array')) },
);

/** Base64 of UTF-8 text. */
export function base64(text: string | Buffer): string {
  return (typeof text === 'string' ? Buffer.from(text, 'utf8') : text).toString('base64');
}
