import { decodeBase64, parsePushEnvelope } from '../../functions/src/receiver/envelope';

describe('parsePushEnvelope', () => {
  const cases: Array<[string, unknown, string | null]> = [
    ['camelCase envelope', { message: { data: 'e30=', messageId: '1', publishTime: '2026-11-29T10:00:00.123Z' }, subscription: 's' }, null],
    ['snake_case envelope', { message: { data: 'e30=', message_id: '1', publish_time: '2026-11-29T10:00:00Z' }, subscription: 's' }, null],
    ['emulator envelope without publishTime', { message: { data: 'e30=', messageId: '1' }, subscription: 's' }, null],
    ['no data (attributes only)', { message: { messageId: '1', attributes: { a: 'b' } } }, null],
    ['null attributes', { message: { messageId: '1', attributes: null } }, null],
    ['not an object', 'hello', 'not a JSON object'],
    ['array', [1, 2], 'not a JSON object'],
    ['null', null, 'not a JSON object'],
    ['raw buffer', Buffer.from('x'), 'not a JSON object'],
    ['no message', { subscription: 's' }, 'not a Pub/Sub push envelope'],
    ['no messageId', { message: { data: 'e30=' } }, 'message.messageId is missing'],
    ['messageId not a string', { message: { messageId: 42 } }, 'not a Pub/Sub push envelope'],
    ['attribute value not a string', { message: { messageId: '1', attributes: { a: 1 } } }, 'is not a string'],
    ['attributes an array', { message: { messageId: '1', attributes: ['a'] } }, 'attributes is not an object'],
    ['attributes beyond any Pub/Sub message', { message: { messageId: '1', attributes: { big: 'x'.repeat(300 * 1024) } } }, 'attributes exceed'],
    ['deliveryAttempt negative', { message: { messageId: '1' }, deliveryAttempt: -1 }, 'not a Pub/Sub push envelope'],
  ];
  test.each(cases)('%s', (_name, body, error) => {
    const result = parsePushEnvelope(body);
    if (error === null) {
      expect(result.ok).toBe(true);
    } else {
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error).toContain(error);
    }
  });

  test('normalises both spellings and keeps optional fields as null', () => {
    const result = parsePushEnvelope({ message: { data: 'e30=', message_id: 'm-1', publish_time: '2026-11-29T10:00:00Z', ordering_key: 'k' }, deliveryAttempt: 3 });
    expect(result).toEqual({
      ok: true,
      envelope: expect.objectContaining({ messageId: 'm-1', subscription: null, orderingKey: 'k', deliveryAttempt: 3, publishTime: new Date('2026-11-29T10:00:00Z') }),
    });
  });

  test('attribute keys such as __proto__ stay plain data', () => {
    const body = JSON.parse('{"message":{"messageId":"1","attributes":{"__proto__":"x","constructor":"y","toString":"z"}}}') as unknown;
    const result = parsePushEnvelope(body);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(Object.keys(result.envelope.attributes).sort()).toEqual(['__proto__', 'constructor', 'toString']);
    expect(result.envelope.attributes['__proto__']).toBe('x');
    expect(Object.getPrototypeOf(result.envelope.attributes)).toBeNull();
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
  });

  test('an unparseable publishTime becomes null instead of failing the message', () => {
    const result = parsePushEnvelope({ message: { messageId: '1', publishTime: 'yesterday-ish' } });
    expect(result.ok && result.envelope.publishTime).toBeNull();
  });
});

describe('decodeBase64', () => {
  test.each([
    ['e30=', '{}'],
    ['', ''],
    ['aGVsbG8=', 'hello'],
    ['aGVsbG8', null],
    ['aGVs bG8=', null],
    ['aGVsbG8=aGVs', null],
    ['!!!!', null],
    ['aGVsbG8_', null],
  ])('%j', (input, expected) => {
    const decoded = decodeBase64(input);
    expect(decoded === null ? null : decoded.toString('utf8')).toBe(expected);
  });
});
