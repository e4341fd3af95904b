import fc from 'fast-check';
import { stableId } from '../../functions/src/core/hash';
import { recordId } from '../../functions/src/app';
import { correlationKeyDocId, executionId, instanceId, jobId } from '../../functions/src/engine/ids';
import { collisionDocId, invalidDocId, legacyMessageDocId, messageDocId, shardOf } from '../../functions/src/inbox/ids';

/**
 * Properties of the deterministic document ids (inbox/ids.ts, engine/ids.ts,
 * core/hash.ts, and app.ts's recordId for what apps write once). Dedup rests
 * on them: equal inputs must give equal ids, and different inputs must never
 * share one (a shared id would swallow a message as a "duplicate" or merge
 * two process instances).
 */

const RUNS = { seed: 20_261_129, numRuns: 1_000 };

/** Firestore's rules for a document id (https://firebase.google.com/docs/firestore/quotas#collections_documents_and_fields). */
function isValidFirestoreId(id: string): boolean {
  return (
    id.length > 0 &&
    !id.includes('/') &&
    id !== '.' &&
    id !== '..' &&
    Buffer.byteLength(id, 'utf8') <= 1_500 &&
    !/^__.*__$/.test(id)
  );
}

/** Any text, including the characters an id scheme could trip on: separators, quotes, escapes, lone surrogates. */
const tricky = fc.constantFrom(
  ':',
  '/',
  ',',
  '"',
  '\\',
  '[',
  ']',
  '\u0000',
  '\ud800',
  '\udfff',
  '__',
  '.',
  'é',
  'e\u0301',
);
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.array(fc.oneof(tricky, fc.string({ maxLength: 3 })), { maxLength: 6 }).map((parts) => parts.join('')),
);

/** Every id function, as a function of two strings (the shapes the code passes in). */
const ID_FUNCTIONS: ReadonlyArray<readonly [string, (a: string, b: string) => string]> = [
  ['messageDocId', (a, b) => messageDocId('TaskCompleted', a, b)],
  ['legacyMessageDocId', legacyMessageDocId],
  ['invalidDocId', (a, b) => invalidDocId(a, b)],
  ['collisionDocId', collisionDocId],
  ['instanceId', instanceId],
  ['executionId', executionId],
  ['jobId', (a, b) => jobId(a, b.length)],
  ['correlationKeyDocId', (a, b) => correlationKeyDocId(a + b)],
  // The record id an app's step writes once by (app.ts): an invoice's, a settlement's.
  ['recordId', (a, b) => recordId(a, b)],
];

describe('document ids', () => {
  test.each(ID_FUNCTIONS)('%s is deterministic and a valid Firestore document id (40 lowercase hex)', (_name, id) => {
    fc.assert(
      fc.property(text, text, (a, b) => {
        const value = id(a, b);
        expect(id(a, b)).toBe(value);
        expect(value).toMatch(/^[0-9a-f]{40}$/);
        expect(isValidFirestoreId(value)).toBe(true);
      }),
      RUNS,
    );
  });

  test('no separator trick: two different part lists that concatenate (or join with a separator) equally get different ids', () => {
    // (a, b + c) vs (a + b, c) with b non-empty: equal concatenations, different tuples.
    const split = fc.tuple(
      text,
      text.filter((b) => b.length > 0),
      text,
      fc.constantFrom('', ':', ',', '","', '\\"', '/'),
    );
    fc.assert(
      fc.property(split, ([a, b, c, sep]) => {
        expect(messageDocId('N', a, b + sep + c)).not.toBe(messageDocId('N', a + sep + b, c));
        expect(legacyMessageDocId(a, b + sep + c)).not.toBe(legacyMessageDocId(a + sep + b, c));
        expect(instanceId(a, b + sep + c)).not.toBe(instanceId(a + sep + b, c));
        expect(stableId(a, b, c)).not.toBe(stableId(a + b, c));
        expect(stableId(a, b, c)).not.toBe(stableId(a, b + c));
        // A list and its JSON-looking concatenation differ too.
        expect(stableId(a, b)).not.toBe(stableId(`${a}","${b}`));
      }),
      RUNS,
    );
  });

  test('injective in practice: distinct inputs give distinct ids, and different kinds of id never meet', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(text, text), {
          minLength: 2,
          maxLength: 60,
          selector: ([a, b]) => JSON.stringify([a, b]),
        }),
        (pairs) => {
          const ids = new Set<string>();
          for (const [a, b] of pairs) for (const [, id] of ID_FUNCTIONS.slice(0, 6)) ids.add(id(a, b));
          // Six kinds of id per distinct pair, all different: the kind tag (and the number of parts) separates kinds, the hash separates inputs.
          expect(ids.size).toBe(pairs.length * 6);
        },
      ),
      { ...RUNS, numRuns: 200 },
    );
  });

  test('a collision document never lands on the document it collides with', () => {
    fc.assert(
      fc.property(text, text, fc.string({ unit: 'binary' }), (name, key, payloadHash) => {
        const first = messageDocId(name, key, key);
        expect(collisionDocId(first, payloadHash)).not.toBe(first);
      }),
      RUNS,
    );
  });

  test("the receiver's missing subscription and an empty one are the same (both mean: unknown), any real name differs", () => {
    fc.assert(
      fc.property(
        text.filter((s) => s.length > 0),
        text,
        (subscription, messageId) => {
          expect(invalidDocId(null, messageId)).toBe(invalidDocId('', messageId));
          expect(invalidDocId(subscription, messageId)).not.toBe(invalidDocId(null, messageId));
        },
      ),
      RUNS,
    );
  });
});

describe('shardOf', () => {
  test('is an integer in [0, shards) for every id the code produces', () => {
    fc.assert(
      fc.property(text, text, fc.integer({ min: 1, max: 10_000 }), (a, b, shards) => {
        const shard = shardOf(messageDocId('M', a, b), shards);
        expect(Number.isInteger(shard)).toBe(true);
        expect(shard).toBeGreaterThanOrEqual(0);
        expect(shard).toBeLessThan(shards);
      }),
      RUNS,
    );
  });

  test.each([16, 7, 64])(
    'spreads 20 000 cases evenly over %d shards (chi-square far below what skew gives)',
    (shards) => {
      // Fixed inputs (a seeded sample plus a sequence): deterministic, so the bound cannot flake.
      const keys = [
        ...fc.sample(text, { seed: 7, numRuns: 10_000 }),
        ...Array.from({ length: 10_000 }, (_, i) => `C-${i}`),
      ];
      const counts = new Array<number>(shards).fill(0);
      keys.forEach((key, i) => {
        const shard = shardOf(messageDocId('TaskCompleted', `${i}:${key}`, 'evt'), shards);
        counts[shard] = (counts[shard] ?? 0) + 1;
      });
      const expected = keys.length / shards;
      const chiSquare = counts.reduce((sum, n) => sum + (n - expected) ** 2 / expected, 0);
      // Uniform: chi-square ≈ shards - 1 ± sqrt(2(shards - 1)). 3 × (shards - 1) + 30 is far out in that tail,
      // yet a real skew (one shard twice as full, or a shard formula that ignores a hex digit) exceeds it.
      expect(chiSquare).toBeLessThan(3 * (shards - 1) + 30);
      expect(Math.min(...counts)).toBeGreaterThan(0);
    },
  );
});
