import { Timestamp } from '@google-cloud/firestore';
import { isTimestamp } from '../../functions/src/core/timestamp';

test.each<[string, unknown, boolean]>([
  ['a Firestore Timestamp', Timestamp.fromMillis(1_700_000_000_000), true],
  ['a Date', new Date(), false],
  ['null', null, false],
  ['a number', 1_700_000_000, false],
  ['seconds without toDate', { seconds: 1, nanoseconds: 0 }, false],
  ['toDate that is not a function', { seconds: 1, nanoseconds: 0, toDate: 'soon' }, false],
])('isTimestamp(%s) is %p', (_name, value, expected) => {
  expect(isTimestamp(value)).toBe(expected);
});

test('a Timestamp read by shape converts to the same instant', () => {
  const t = Timestamp.fromMillis(1_700_000_000_123);
  expect(isTimestamp(t) ? t.toDate().getTime() : null).toBe(1_700_000_000_123);
});
