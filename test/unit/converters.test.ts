import { Timestamp } from '@google-cloud/firestore';
import { datesIn, toDates } from '../../functions/src/engine/store/converters';

/** What every read through the STORED converter does to a document's fields (the reads themselves: test/engine/unit-of-work.test.ts). */
describe('datesIn: a document with its Timestamps as Dates', () => {
  const at = Timestamp.fromMillis(1_700_000_000_123);

  test('at the top, inside maps and inside arrays', () => {
    const out = datesIn({ receivedAt: at, lane: [{ receivedAt: at }, 'x'], deadLetter: { at, nested: { at } } });
    expect(out).toEqual({
      receivedAt: at.toDate(),
      lane: [{ receivedAt: at.toDate() }, 'x'],
      deadLetter: { at: at.toDate(), nested: { at: at.toDate() } },
    });
    expect(out.receivedAt).toBeInstanceOf(Date);
  });

  test('everything else as it is: bytes, numbers, null', () => {
    const bytes = Buffer.from('raw');
    const out = datesIn({ rawData: bytes, attempts: 3, requeuedAt: null });
    expect(out.rawData).toBe(bytes);
    expect(out).toEqual({ rawData: bytes, attempts: 3, requeuedAt: null });
  });

  test('a field named __proto__ stays data and pollutes nothing', () => {
    const out = datesIn(JSON.parse('{"payload":{"__proto__":{"polluted":true}}}') as Record<string, unknown>);
    const payload = out.payload as Record<string, unknown>;
    expect(Object.keys(payload)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(payload)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  test('toDates takes any value', () => {
    expect(toDates(at)).toEqual(at.toDate());
    expect(toDates([at])).toEqual([at.toDate()]);
    expect(toDates('text')).toBe('text');
  });
});
