import { collisionDocId, invalidDocId, legacyMessageDocId, messageDocId, shardOf } from '../../functions/src/inbox/ids';
import { canonicalJson } from '../../functions/src/core/hash';
import { classifyFailure, DeadlineExceededError, withDeadline } from '../../functions/src/core/errors';

describe('document ids', () => {
  test('are deterministic, hex, and differ per part', () => {
    expect(messageDocId('A', 'C-1', 'k')).toBe(messageDocId('A', 'C-1', 'k'));
    expect(messageDocId('A', 'C-1', 'k')).toMatch(/^[0-9a-f]{40}$/);
    expect(messageDocId('A', 'C-1', 'k')).not.toBe(messageDocId('B', 'C-1', 'k'));
    // The correlation key is part of the identity: one event id under two keys is two events.
    expect(messageDocId('A', 'C-1', 'k')).not.toBe(messageDocId('A', 'C-2', 'k'));
    // Part boundaries matter: ("a:b","c") is not ("a","b:c").
    expect(messageDocId('a:b', 'c', 'd')).not.toBe(messageDocId('a', 'b:c', 'd'));
    // The old scheme (name, dedup key) never meets the new one.
    expect(legacyMessageDocId('A', 'k')).not.toBe(messageDocId('A', '', 'k'));
    expect(invalidDocId(null, 'm')).not.toBe(invalidDocId('s', 'm'));
    expect(collisionDocId('x', 'h1')).not.toBe(collisionDocId('x', 'h2'));
  });

  test('are not sequential for sequential keys', () => {
    const ids = Array.from({ length: 50 }, (_, i) => messageDocId('TaskCompleted', `C-${i}`, `TaskCompleted:C-${i}`));
    const sorted = [...ids].sort();
    expect(sorted).not.toEqual(ids);
  });

  test('shards spread evenly', () => {
    const counts = new Array<number>(16).fill(0);
    for (let i = 0; i < 16_000; i++) counts[shardOf(messageDocId('M', String(i), 'e'), 16)]! += 1;
    for (const c of counts) expect(c).toBeGreaterThan(800);
  });
});

describe('canonicalJson', () => {
  test('sorts keys at every level and drops undefined', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: undefined } })).toBe(
      '{"a":{"d":[2,{"e":0,"f":1}]},"b":1}',
    );
  });
});

describe('classifyFailure', () => {
  const table: Array<[string, unknown, 'retryable' | 'unexpected', string]> = [
    ['UNAVAILABLE', { code: 14 }, 'retryable', 'UNAVAILABLE'],
    ['DEADLINE_EXCEEDED', { code: 4 }, 'retryable', 'DEADLINE_EXCEEDED'],
    ['ABORTED', { code: 10 }, 'retryable', 'ABORTED'],
    ['RESOURCE_EXHAUSTED', { code: 8 }, 'retryable', 'RESOURCE_EXHAUSTED'],
    ['INTERNAL', { code: 13 }, 'retryable', 'INTERNAL'],
    [
      'refused connection',
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      'retryable',
      'ECONNREFUSED',
    ],
    ['our own deadline', new DeadlineExceededError('x', 5), 'retryable', 'DEADLINE_EXCEEDED'],
    ['INVALID_ARGUMENT', { code: 3 }, 'unexpected', 'GRPC_3'],
    ['PERMISSION_DENIED', { code: 7 }, 'unexpected', 'GRPC_7'],
    ['a plain bug', new TypeError('x is undefined'), 'unexpected', 'UNKNOWN'],
    ['a thrown string', 'boom', 'unexpected', 'UNKNOWN'],
  ];
  test.each(table)('%s', (_name, err, kind, code) => {
    expect(classifyFailure(err)).toEqual({ kind, code });
  });
});

describe('withDeadline', () => {
  test('passes results through and rejects when the deadline passes', async () => {
    await expect(withDeadline('fast', 1_000, async () => 7)).resolves.toBe(7);
    await expect(withDeadline('slow', 5, () => new Promise(() => undefined))).rejects.toBeInstanceOf(
      DeadlineExceededError,
    );
  });
});
