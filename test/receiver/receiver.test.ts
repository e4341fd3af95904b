import request from 'supertest';
import { INBOX, RAW_CHUNKS } from '../../functions/src/inbox/document';
import { collisionDocId, invalidDocId, messageDocId } from '../../functions/src/inbox/ids';
import { correlationKeyDocId } from '../../functions/src/engine/ids';
import { freshFirestores } from '../support/firestore';
import { base64Json, completion, completionEnvelope, envelope, TEST_SUBSCRIPTION } from '../support/push';
import { testReceiver } from '../support/receiver';
import { loadConfig } from '../../functions/src/config';

const db = freshFirestores()('receiver');
const { server, logs } = testReceiver(db);
const inbox = db.collection(INBOX);

async function count(): Promise<number> {
  return (await inbox.count().get()).data().count;
}

describe('receivePubSubPush: outcomes', () => {
  test('a new message is stored OPEN under its deterministic id, then acked', async () => {
    const body = completionEnvelope(
      { caseId: 'C-new' },
      { messageId: 'm-new', publishTime: '2026-11-29T09:59:00Z', deliveryAttempt: 1 },
    );
    const res = await request(server).post('/').send(body);
    expect(res.status).toBe(200);
    const id = messageDocId('TaskCompleted', 'C-new', 'TaskCompleted:C-new');
    expect(res.body).toEqual({ outcome: 'stored', id, status: 'OPEN', reason: null });

    const doc = (await inbox.doc(id).get()).data();
    expect(doc).toMatchObject({
      status: 'OPEN',
      reason: null,
      messageName: 'TaskCompleted',
      correlationKey: 'C-new',
      dedupKey: 'TaskCompleted:C-new',
      payload: completion({ caseId: 'C-new' }),
      attempts: 0,
      lastError: null,
      source: {
        subscription: TEST_SUBSCRIPTION,
        messageId: 'm-new',
        deliveryAttempt: 1,
        orderingKey: null,
        attributes: [{ key: 'eventType', value: 'TaskCompleted' }],
      },
    });
    expect(doc?.payloadHash).toMatch(/^[0-9a-f]{64}$/);
    expect(doc?.shard).toEqual(expect.any(Number));
    expect(doc?.source.publishTime.toDate().toISOString()).toBe('2026-11-29T09:59:00.000Z');
    expect(doc?.nextAttemptAt.toMillis()).toBe(doc?.receivedAt.toMillis());
  });

  test("the new document joins its key's lane atomically; a duplicate does not", async () => {
    const body = completionEnvelope({ caseId: 'C-lane' }, { messageId: 'm-lane', publishTime: '2026-11-29T09:00:00Z' });
    const res = await request(server).post('/').send(body);
    await request(server).post('/').send(body);
    const lane = (await db.collection('correlationKeys').doc(correlationKeyDocId('C-lane')).get()).get('open') as Array<
      Record<string, unknown>
    >;
    expect(lane).toHaveLength(1);
    expect(lane[0]).toMatchObject({ inboxId: res.body.id, messageName: 'TaskCompleted' });
    expect((lane[0]!.publishTime as FirebaseFirestore.Timestamp).toDate().toISOString()).toBe(
      '2026-11-29T09:00:00.000Z',
    );
  });

  test('a redelivery changes nothing and is logged as a duplicate', async () => {
    const body = completionEnvelope({ caseId: 'C-redelivered' }, { messageId: 'm-r' });
    expect((await request(server).post('/').send(body)).status).toBe(200);
    const id = messageDocId('TaskCompleted', 'C-redelivered', 'TaskCompleted:C-redelivered');
    const before = await inbox.doc(id).get();

    const again = await request(server).post('/').send(body);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ outcome: 'duplicate', id });
    const after = await inbox.doc(id).get();
    expect(after.updateTime?.isEqual(before.updateTime!)).toBe(true);
    expect(logs.some((l) => l.outcome === 'duplicate' && l.inboxId === id)).toBe(true);
  });

  test('a duplicate publish (new messageId, same event) is a duplicate too', async () => {
    await request(server)
      .post('/')
      .send(completionEnvelope({ caseId: 'C-dup', eventId: 'e-1' }, { messageId: 'a' }));
    const res = await request(server)
      .post('/')
      .send(
        completionEnvelope(
          { caseId: 'C-dup', eventId: 'e-1', completionTimestamp: '2026-11-29T10:00:00.000Z' },
          { messageId: 'b' },
        ),
      );
    // Same instant written differently is a different payload: the event id alone does not decide.
    expect(res.body.outcome).toBe('stored');
    const same = await request(server)
      .post('/')
      .send(completionEnvelope({ caseId: 'C-dup', eventId: 'e-1' }, { messageId: 'c' }));
    expect(same.body).toEqual({ outcome: 'duplicate', id: messageDocId('TaskCompleted', 'C-dup', 'e-1') });
  });

  test('same dedup key, different payload: the second is kept as PARKED KEY_COLLISION pointing at the first', async () => {
    const first = completionEnvelope({ caseId: 'C-tranche', completedItems: 100 }, { messageId: 't1' });
    const second = completionEnvelope({ caseId: 'C-tranche', completedItems: 250 }, { messageId: 't2' });
    const firstId = messageDocId('TaskCompleted', 'C-tranche', 'TaskCompleted:C-tranche');
    await request(server).post('/').send(first);
    const res = await request(server).post('/').send(second);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      outcome: 'stored',
      status: 'PARKED',
      reason: 'KEY_COLLISION',
      collidesWith: firstId,
    });

    const collision = (await inbox.doc(res.body.id as string).get()).data();
    expect(collision).toMatchObject({
      status: 'PARKED',
      reason: 'KEY_COLLISION',
      collidesWith: firstId,
      payload: { completedItems: 250 },
      nextAttemptAt: null,
    });
    expect((await inbox.doc(firstId).get()).get('payload.completedItems')).toBe(100);

    // Redelivering the colliding message does not create a third document.
    const again = await request(server).post('/').send(second);
    expect(again.body.id).toBe(res.body.id);
    const collisions = await inbox.where('collidesWith', '==', firstId).get();
    expect(collisions.size).toBe(1);
    expect(res.body.id).toBe(collisionDocId(firstId, collision?.payloadHash as string));
  });

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    [
      'data that is not base64',
      envelope({ data: '%%%', attributes: { eventType: 'TaskCompleted' } }),
      'not valid base64',
    ],
    [
      'data that is not JSON',
      envelope({ data: Buffer.from('hello').toString('base64'), attributes: { eventType: 'TaskCompleted' } }),
      'not JSON',
    ],
    [
      'an unknown message name',
      envelope({ data: base64Json(completion({ caseId: 'x' })), attributes: { eventType: 'Nope' } }),
      'unknown message name',
    ],
    ['no message name at all', envelope({ data: base64Json(completion({ caseId: 'x' })) }), 'message name missing'],
    [
      'a schema violation',
      envelope({
        data: base64Json({ caseId: 'x', completedItems: -3, completionTimestamp: 'now' }),
        attributes: { eventType: 'TaskCompleted' },
      }),
      'completedItems',
    ],
    [
      'a missing correlation key',
      envelope({
        data: base64Json({ completedItems: 1, completionTimestamp: '2026-11-29T10:00:00Z' }),
        attributes: { eventType: 'TaskCompleted' },
      }),
      'caseId',
    ],
    ['no data at all', envelope({ attributes: { eventType: 'TaskCompleted' } }), 'not JSON'],
    // Found by the hostile suite (test/hostile): Firestore refused the text (503 on every redelivery).
    [
      'an escaped lone surrogate in the case id',
      envelope({
        data: Buffer.from(
          '{"caseId":"C-\\ud800","completedItems":1,"completionTimestamp":"2026-11-29T10:00:00Z"}',
        ).toString('base64'),
        attributes: { eventType: 'TaskCompleted' },
      }),
      'not valid Unicode',
    ],
  ];
  test.each(invalid)(
    '%s is stored PARKED as INVALID_PAYLOAD with raw data, attributes and the error',
    async (_name, body, error) => {
      const res = await request(server).post('/').send(body);
      expect(res.status).toBe(200);
      const message = body.message as { messageId: string; data: string };
      const id = invalidDocId(TEST_SUBSCRIPTION, message.messageId);
      expect(res.body).toEqual({ outcome: 'stored', id, status: 'PARKED', reason: 'INVALID_PAYLOAD' });
      const doc = (await inbox.doc(id).get()).data();
      expect(doc).toMatchObject({
        status: 'PARKED',
        reason: 'INVALID_PAYLOAD',
        nextAttemptAt: null,
        payload: null,
        rawDataChunks: 0,
      });
      expect(doc?.validationError).toContain(error);
      expect(doc?.source.messageId).toBe(message.messageId);
      const raw = Buffer.from(doc?.rawData as Uint8Array);
      expect(doc?.rawDataForm === 'DECODED' ? raw.toString('base64') : raw.toString('utf8')).toBe(message.data);

      const again = await request(server).post('/').send(body);
      expect(again.body).toEqual({ outcome: 'duplicate', id });
    },
  );

  // Found by the hostile suite: a Date Firestore's Timestamp cannot hold made every write throw (500 on every redelivery).
  test("a publishTime outside Firestore's range is stored as null, the message OPEN", async () => {
    const res = await request(server)
      .post('/')
      .send(completionEnvelope({ caseId: 'C-year-0' }, { publishTime: '0000-01-01T00:00:00Z' }));
    expect(res.status).toBe(200);
    expect((await inbox.doc(res.body.id as string).get()).data()).toMatchObject({
      status: 'OPEN',
      source: { publishTime: null },
    });
  });

  // Found by the hostile suite: attributes were counted in characters, so 3-byte characters plus inline raw data passed 1 MiB (500).
  test('the largest attributes accepted plus the largest inline raw data still fit in one document', async () => {
    const raw = Buffer.alloc(256 * 1024, 0x41);
    const big = '中'.repeat(Math.floor((256 * 1024 - 200) / 3));
    const res = await request(server)
      .post('/')
      .send(envelope({ data: raw.toString('base64'), attributes: { eventType: 'TaskCompleted', big } }));
    expect(res.status).toBe(200);
    expect((await inbox.doc(res.body.id as string).get()).data()).toMatchObject({
      reason: 'INVALID_PAYLOAD',
      rawDataBytes: raw.length,
      rawDataChunks: 0,
    });
  });

  test('raw data too large for one document is split into chunks and reassembles exactly', async () => {
    const data = Buffer.alloc(2 * 1024 * 1024 + 17, 0x5a);
    data.write('{"not": "closed"', 0);
    const body = envelope({ data: data.toString('base64'), attributes: { eventType: 'TaskCompleted' } });
    const res = await request(server).post('/').send(body);
    expect(res.status).toBe(200);
    const doc = (await inbox.doc(res.body.id as string).get()).data();
    expect(doc).toMatchObject({
      reason: 'INVALID_PAYLOAD',
      rawData: null,
      rawDataBytes: data.length,
      rawDataChunks: 3,
    });
    const chunks = await inbox
      .doc(res.body.id as string)
      .collection(RAW_CHUNKS)
      .orderBy('index')
      .get();
    const joined = Buffer.concat(chunks.docs.map((c) => Buffer.from(c.get('bytes') as Uint8Array)));
    expect(joined.equals(data)).toBe(true);
  });

  test('the default limit takes the largest message Pub/Sub sends (10 MiB of data) and refuses one byte more than the limit', async () => {
    const { maxBodyBytes } = loadConfig({ GOOGLE_CLOUD_PROJECT: 'limit-test' });
    const receiver = testReceiver(db, { maxBodyBytes });
    const data = Buffer.alloc(10 * 1024 * 1024, 0x7a);
    const largest = JSON.stringify(
      envelope({ data: data.toString('base64'), attributes: { eventType: 'TaskCompleted' } }),
    );
    expect(Buffer.byteLength(largest)).toBeLessThanOrEqual(maxBodyBytes);
    const res = await request(receiver.server).post('/').set('content-type', 'application/json').send(largest);
    expect(res.status).toBe(200);
    const doc = (await inbox.doc(res.body.id as string).get()).data();
    expect(doc).toMatchObject({ reason: 'INVALID_PAYLOAD', rawDataBytes: data.length });
    const chunks = (
      await inbox
        .doc(res.body.id as string)
        .collection(RAW_CHUNKS)
        .count()
        .get()
    ).data().count;
    expect(chunks).toBe(doc?.rawDataChunks);

    const shell = JSON.stringify(envelope({ data: '', messageId: 'over-the-limit' }));
    const over = shell.replace('"data":""', `"data":"${'A'.repeat(maxBodyBytes + 1 - Buffer.byteLength(shell))}"`);
    expect(Buffer.byteLength(over)).toBe(maxBodyBytes + 1);
    const before = await count();
    const refused = await request(receiver.server).post('/').set('content-type', 'application/json').send(over);
    expect(refused.status).toBe(413);
    expect(await count()).toBe(before);
  });
});

describe('receivePubSubPush: requests that are not pushes', () => {
  const cases: Array<[string, (r: request.Agent) => request.Test, number, string]> = [
    ['a JSON body without messageId', (r) => r.post('/').send({ message: { data: 'e30=' } }), 400, 'messageId'],
    ['a JSON array', (r) => r.post('/').send([1, 2, 3]), 400, 'not a JSON object'],
    ['plain text', (r) => r.post('/').set('content-type', 'text/plain').send('hello'), 400, 'not a JSON object'],
    ['an empty body', (r) => r.post('/'), 400, 'not a JSON object'],
    ['a GET', (r) => r.get('/'), 405, 'POST'],
  ];
  test.each(cases)('%s: a 4xx with a JSON error, nothing stored', async (_name, send, status, error) => {
    const before = await count();
    const res = await send(request.agent(server));
    expect(res.status).toBe(status);
    expect(res.type).toBe('application/json');
    expect(res.body.error).toContain(error);
    expect(await count()).toBe(before);
  });

  test('a body over the configured limit: 413, nothing stored', async () => {
    const small = testReceiver(db, { maxBodyBytes: 1_000 });
    const before = await count();
    const res = await request(small.server)
      .post('/')
      .send(completionEnvelope({ caseId: 'x'.repeat(200) }, { attributes: { pad: 'p'.repeat(2_000) } }));
    expect(res.status).toBe(413);
    expect(res.body.error).toContain('exceeds 1000 bytes');
    expect(await count()).toBe(before);
  });
});
