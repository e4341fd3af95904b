import { RAW_TEXT_BYTES, rawTextOf, textEnd } from '../../functions/src/operations/raw-text';

/**
 * The raw data of a document as text: the first bytes, their count, and
 * whether they are UTF-8 (bytes that are not become U+FFFD). What the
 * console's document view shows of an unreadable message.
 */
describe('rawTextOf', () => {
  test('UTF-8 text, HTML included, is the text as it is: the page sets it as text', () => {
    const bytes = Buffer.from('<script>alert("x")</script> £ €', 'utf8');
    expect(rawTextOf(bytes, bytes.length, 'DECODED')).toEqual({
      bytes: bytes.length,
      form: 'DECODED',
      text: '<script>alert("x")</script> £ €',
      shownBytes: bytes.length,
      utf8: true,
    });
  });

  test('bytes that are not UTF-8: each shown as U+FFFD, and said so', () => {
    const view = rawTextOf(Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), 4, 'DECODED');
    expect(view).toMatchObject({ text: '{\uFFFD\uFFFD}', utf8: false, shownBytes: 4 });
  });

  test('a byte order mark is kept, not swallowed', () => {
    expect(rawTextOf(Buffer.from([0xef, 0xbb, 0xbf, 0x61]), 4, null).text).toBe('\uFEFFa');
  });

  test('clipped at the limit, never inside a character; the whole count is kept', () => {
    const text = `${'a'.repeat(RAW_TEXT_BYTES - 1)}€ and more`;
    const bytes = Buffer.from(text, 'utf8');
    const view = rawTextOf(bytes, bytes.length, 'DECODED');
    expect(view.shownBytes).toBe(RAW_TEXT_BYTES - 1);
    expect(view.text).toBe('a'.repeat(RAW_TEXT_BYTES - 1));
    expect(view.utf8).toBe(true);
    expect(view.bytes).toBe(bytes.length);
  });

  test('a head shorter than the whole (the first chunk of many): the count is the whole', () => {
    expect(rawTextOf(Buffer.from('abc'), 5_000_000, 'DECODED', 2)).toMatchObject({
      bytes: 5_000_000,
      shownBytes: 2,
      text: 'ab',
    });
  });

  test.each([
    ['ASCII', Buffer.from('abcdef'), 3, 3],
    ['before a 2-byte character', Buffer.from('ab£', 'utf8'), 3, 2],
    ['inside a 4-byte character', Buffer.from('a😀b', 'utf8'), 3, 1],
    ['inside a 4-byte character, its last byte', Buffer.from('a😀b', 'utf8'), 4, 1],
    ['after a 4-byte character', Buffer.from('a😀b', 'utf8'), 5, 5],
    ['continuation bytes only: cut where asked', Buffer.from([0x80, 0x80, 0x80, 0x80, 0x80, 0x80]), 4, 4],
    ['shorter than the limit', Buffer.from('ab'), 10, 2],
  ])('textEnd: %s', (_name, bytes, limit, end) => {
    expect(textEnd(bytes, limit)).toBe(end);
  });
});
