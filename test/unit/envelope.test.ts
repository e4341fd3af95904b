import { decodeBase64, parsePushEnvelope } from '../../functions/src/receiver/envelope';

describe('parsePushEnvelope', () => {
  const cases: Array<[string, unknown, string | null]> = [
    [
      'camelCase envelope',
      { message: { data: 'e30=', messageId: '1', publishTime: '2026-11-29T10:00:00.123Z' }, subscription: 's' },
      null,
    ],
    [
      'snake_case envelope',
      { message: { data: 'e30=', message_id: '1', publish_time: '2026-11-29T10:00:00Z' }, subscription: 's' },
      null,
    ],
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
    [
      'attributes beyond any Pub/Sub message',
      { message: { messageId: '1', attributes: { big: 'x'.repeat(300 * 1024) } } },
      'attributes exceed',
    ],
    ['deliveryAttempt negative', { message: { messageId: '1' }, deliveryAttempt: -1 }, 'not a Pub/Sub push envelope'],
    // Found by the hostile suite: each of these used to reach Firestore and fail there, on every redelivery.
    [
      'attributes over 256 KiB in UTF-8, though under 256 Ki characters',
      { message: { messageId: '1', attributes: { big: '中'.repeat(90_000) } } },
      'attributes exceed 262144 bytes',
    ],
    [
      'many tiny attributes, whose stored pairs outweigh their text',
      {
        message: {
          messageId: '1',
          attributes: Object.fromEntries(Array.from({ length: 15_000 }, (_, i) => [`k${i}`, 'v'])),
        },
      },
      'attributes exceed',
    ],
    [
      'an attribute key longer than a Firestore map key may be',
      { message: { messageId: '1', attributes: { [`CloudPubSubDeadLetterSource${'x'.repeat(2_000)}`]: 'v' } } },
      'exceeds 512 bytes',
    ],
    [
      'a lone surrogate in an attribute value',
      { message: { messageId: '1', attributes: { k: 'a\ud800' } } },
      'not valid Unicode',
    ],
    [
      'a lone surrogate in an attribute key',
      { message: { messageId: '1', attributes: { 'k\udfff': 'v' } } },
      'not valid Unicode',
    ],
    ['a lone surrogate in messageId', { message: { messageId: 'm\udc00' } }, 'message.messageId is not valid Unicode'],
    [
      'a lone surrogate in the subscription',
      { message: { messageId: '1' }, subscription: 's\ud800' },
      'subscription is not valid Unicode',
    ],
    [
      'a lone surrogate in ordering_key',
      { message: { messageId: '1', ordering_key: '\udbff' } },
      'message.orderingKey is not valid Unicode',
    ],
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
    const result = parsePushEnvelope({
      message: { data: 'e30=', message_id: 'm-1', publish_time: '2026-11-29T10:00:00Z', ordering_key: 'k' },
      deliveryAttempt: 3,
    });
    expect(result).toEqual({
      ok: true,
      envelope: expect.objectContaining({
        messageId: 'm-1',
        subscription: null,
        orderingKey: 'k',
        deliveryAttempt: 3,
        publishTime: new Date('2026-11-29T10:00:00Z'),
      }),
    });
  });

  test('attribute keys such as __proto__ stay plain data', () => {
    const body = JSON.parse(
      '{"message":{"messageId":"1","attributes":{"__proto__":"x","constructor":"y","toString":"z"}}}',
    ) as unknown;
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

  // Found by the hostile suite: Date.parse accepts these, Firestore's Timestamp (years 1 to 9999) does not, so every write threw.
  test.each([
    '0000-01-01T00:00:00Z',
    '-000001-01-01T00:00:00Z',
    '+275760-09-13T00:00:00.000Z',
    '+010000-01-01T00:00:00Z',
  ])('a publishTime Firestore cannot store (%s) becomes null', (publishTime) => {
    const result = parsePushEnvelope({ message: { messageId: '1', publishTime } });
    expect(result.ok && result.envelope.publishTime).toBeNull();
  });

  test("publishTime at both ends of Firestore's range is kept", () => {
    for (const publishTime of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z']) {
      const result = parsePushEnvelope({ message: { messageId: '1', publishTime } });
      expect(result.ok && result.envelope.publishTime?.toISOString()).toBe(new Date(publishTime).toISOString());
    }
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
