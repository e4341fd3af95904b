import { Timestamp } from '@google-cloud/firestore';
import { changedFields, sameValue } from '../../functions/src/engine/store/write-plan';

/** The field diff a repair preview shows (PlannedWrite.fields): pure, against what the unit of work read. */
describe('changedFields', () => {
  const at = new Date('2026-01-02T03:04:05.678Z');

  test.each<[string, Record<string, unknown> | undefined, Record<string, unknown>, string[]]>([
    [
      'a document new to the unit: every field it writes, sorted',
      undefined,
      { status: 'OPEN', attempts: 0, a: null },
      ['a', 'attempts', 'status'],
    ],
    ['undefined is no field (ignoreUndefinedProperties)', undefined, { status: 'OPEN', gone: undefined }, ['status']],
    ['nothing changes: no field', { status: 'OPEN', attempts: 2 }, { status: 'OPEN', attempts: 2 }, []],
    ['a changed value', { status: 'PARKED', attempts: 2 }, { status: 'OPEN', attempts: 2 }, ['status']],
    [
      'a new field and a dropped one',
      { status: 'OPEN', reason: 'AMBIGUOUS' },
      { status: 'OPEN', requeuedAt: at },
      ['reason', 'requeuedAt'],
    ],
    ['a field set to undefined is dropped', { reason: 'AMBIGUOUS' }, { reason: undefined }, ['reason']],
    ['null is a value: absent to null changes', {}, { parkedAt: null }, ['parkedAt']],
    ['the same instant as Date and as Timestamp is no change', { at }, { at: Timestamp.fromDate(at) }, []],
    ['another instant is a change', { at }, { at: new Date(at.getTime() + 1) }, ['at']],
    [
      'a nested change marks its top-level field',
      { tokens: { t1: { status: 'ACTIVE', at } } },
      { tokens: { t1: { status: 'ENDED', at } } },
      ['tokens'],
    ],
    [
      'nested equal maps (key order aside) are no change',
      { tokens: { a: 1, b: [1, { c: at }] } },
      { tokens: { b: [1, { c: new Date(at.getTime()) }], a: 1 } },
      [],
    ],
    [
      'an appended repair record changes repairs',
      { repairs: [{ requestId: 'r1' }] },
      { repairs: [{ requestId: 'r1' }, { requestId: 'r2' }] },
      ['repairs'],
    ],
    ['bytes compare by content', { raw: Buffer.from('ab') }, { raw: new Uint8Array([97, 98]) }, []],
    ['other bytes are a change', { raw: Buffer.from('ab') }, { raw: Buffer.from('ac') }, ['raw']],
    ['a number is not its string', { n: 1 }, { n: '1' }, ['n']],
    ['a map is not an array', { v: {} }, { v: [] }, ['v']],
  ])('%s', (_name, before, after, expected) => {
    expect(changedFields(before, after)).toEqual(expected);
  });

  test('sameValue: a stored NaN rewritten is no change; null is not absent; a nested undefined is absent', () => {
    expect(sameValue(Number.NaN, Number.NaN)).toBe(true);
    expect(sameValue('x', 'x')).toBe(true);
    expect(sameValue(null, undefined)).toBe(false);
    expect(sameValue({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(sameValue({ a: 1, b: null }, { a: 1 })).toBe(false);
  });
});
