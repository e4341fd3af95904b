import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import request from 'supertest';
import { createDeadLetterHandler, type DeadLetterDeps } from '../../functions/src/deadletter/receive-dead-letter';
import { INBOX, RAW_CHUNKS } from '../../functions/src/inbox/document';
import { completionOfBytes } from '../support/claims';
import { invalidDocId, messageDocId } from '../../functions/src/inbox/ids';
import { createLogger } from '../../functions/src/log';
import { FIXTURE_REGISTRY } from '../support/app';
import { startTcpProxy } from '../../tools/faults/tcp-proxy';
import { freshFirestores } from '../support/firestore';
import { base64Json, completion, completionEnvelope, envelope } from '../support/push';
import { testReceiver } from '../support/receiver';
import { waitFor } from '../support/wait';

const firestore = freshFirestores();
const db = firestore('dead-letter');
const inbox = db.collection(INBOX);
let registered = 0;

function deadLetterServer(overrides: Partial<DeadLetterDeps> = {}): {
  server: ReturnType<typeof getTestServer>;
  logs: Array<Record<string, unknown>>;
} {
  const logs: Array<Record<string, unknown>> = [];
  const name = `deadLetterUnderTest${++registered}`;
  http(
    name,
    createDeadLetterHandler({
      db: () => db,
      registry: FIXTURE_REGISTRY,
      verifier: null,
      log: createLogger((l) => logs.push(JSON.parse(l) as Record<string, unknown>)),
      now: () => new Date(),
      maxBodyBytes: 14 * 1024 * 1024,
      writeTimeoutMs: 5_000,
      shards: 16,
      claims: { referenceBuckets: [] },
      ...overrides,
    }),
  );
  return { server: getTestServer(name), logs };
}
const { server, logs } = deadLetterServer();

/** What Pub/Sub adds when it forwards a message to the dead-letter topic. */
const deadLetterAttributes = {
  CloudPubSubDeadLetterSourceSubscription: 'fixture-results-push',
  CloudPubSubDeadLetterSourceSubscriptionProject: 'test',
  CloudPubSubDeadLetterSourceDeliveryCount: '10',
  CloudPubSubDeadLetterSourceTopicPublishTime: '2026-11-29T10:00:00Z',
};

describe('receiveDeadLetter', () => {
  test('a message the inbox never got is kept as PARKED / DEAD_LETTERED with payload and source, for good', async () => {
    const res = await request(server)
      .post('/')
      .send(
        completionEnvelope(
          { caseId: 'C-dl-1' },
          { attributes: deadLetterAttributes, subscription: 'projects/test/subscriptions/dead-letter-push' },
        ),
      );
    expect(res.status).toBe(200);
    const id = messageDocId('TaskCompleted', 'C-dl-1', 'TaskCompleted:C-dl-1');
    expect(res.body).toEqual({ outcome: 'parked', id });
    const doc = (await inbox.doc(id).get()).data();
    expect(doc).toMatchObject({
      status: 'PARKED',
      reason: 'DEAD_LETTERED',
      payload: completion({ caseId: 'C-dl-1' }),
      correlationKey: 'C-dl-1',
      deadLetter: { sourceSubscription: 'projects/test/subscriptions/fixture-results-push', deliveryCount: 10 },
      source: {
        subscription: 'projects/test/subscriptions/fixture-results-push',
        attributes: [{ key: 'eventType', value: 'TaskCompleted' }],
      },
    });
    expect(doc?.expireAt).toBeUndefined();
    expect(logs.some((l) => l.severity === 'ERROR' && l.reason === 'DEAD_LETTERED' && l.inboxId === id)).toBe(true);
  });

  test.each(['OPEN', 'DONE'])(
    'a message the inbox already holds (%s): the event is recorded, the status stays',
    async (status) => {
      const caseId = `C-dl-known-${status}`;
      const receiver = testReceiver(db);
      const stored = await request(receiver.server).post('/').send(completionEnvelope({ caseId }));
      if (status === 'DONE') await inbox.doc(stored.body.id as string).update({ status: 'DONE' });
      const res = await request(server)
        .post('/')
        .send(completionEnvelope({ caseId }, { attributes: deadLetterAttributes, messageId: 'dl-known' }));
      expect(res.body).toEqual({ outcome: 'recorded', id: stored.body.id });
      const doc = (await inbox.doc(stored.body.id as string).get()).data();
      expect(doc?.status).toBe(status);
      expect(doc?.deadLetterEvents).toEqual([expect.objectContaining({ messageId: 'dl-known', deliveryCount: 10 })]);
      // The same dead-letter delivery again adds nothing.
      await request(server)
        .post('/')
        .send(completionEnvelope({ caseId }, { attributes: deadLetterAttributes, messageId: 'dl-known' }));
      expect((await inbox.doc(stored.body.id as string).get()).get('deadLetterEvents')).toHaveLength(1);
    },
  );

  test('an unreadable dead-lettered message keeps its raw bytes and the validation error', async () => {
    const body = envelope({
      data: Buffer.from('not json').toString('base64'),
      attributes: { eventType: 'TaskCompleted', ...deadLetterAttributes },
      messageId: 'm-dl-bad',
    });
    const res = await request(server).post('/').send(body);
    const id = invalidDocId('projects/test/subscriptions/fixture-results-push', 'm-dl-bad');
    expect(res.body).toEqual({ outcome: 'parked', id });
    const doc = (await inbox.doc(id).get()).data();
    expect(doc).toMatchObject({ status: 'PARKED', reason: 'DEAD_LETTERED', rawDataForm: 'DECODED' });
    expect(Buffer.from(doc?.rawData as Uint8Array).toString()).toBe('not json');
    expect(String(doc?.validationError)).toContain('not JSON');
  });

  test('without a payload store, a valid payload too large for a document keeps its summary and its bytes in rawChunks', async () => {
    // This server has no `offload` (tools, tests); production's wiring offloads as the receiver does (dead-letter-size.test.ts).
    const payload = completionOfBytes('C-dl-chunked', 300 * 1024, { eventId: 'evt-dl-chunked' });
    const data = Buffer.from(JSON.stringify(payload));
    const body = envelope({
      data: data.toString('base64'),
      attributes: { eventType: 'TaskCompleted', ...deadLetterAttributes },
      messageId: 'm-dl-chunked',
    });
    const id = messageDocId('TaskCompleted', 'C-dl-chunked', 'evt-dl-chunked');
    expect((await request(server).post('/').send(body)).body).toEqual({ outcome: 'parked', id });
    const doc = (await inbox.doc(id).get()).data();
    expect(doc).toMatchObject({
      status: 'PARKED',
      reason: 'DEAD_LETTERED',
      offloaded: null,
      rawDataBytes: data.length,
      rawDataChunks: 1,
    });
    expect(doc?.payload).not.toHaveProperty('lineItems');
    const chunks = await inbox.doc(id).collection(RAW_CHUNKS).get();
    expect(Buffer.from(chunks.docs[0]?.get('bytes') as Uint8Array).equals(data)).toBe(true);
  });

  test('a different payload under a key the inbox holds gets its own PARKED document pointing at the first', async () => {
    const receiver = testReceiver(db);
    const first = await request(receiver.server)
      .post('/')
      .send(completionEnvelope({ caseId: 'C-dl-col', completedItems: 1 }));
    const res = await request(server)
      .post('/')
      .send(
        envelope({
          data: base64Json(completion({ caseId: 'C-dl-col', completedItems: 2 })),
          attributes: { eventType: 'TaskCompleted', ...deadLetterAttributes },
        }),
      );
    expect(res.body.outcome).toBe('parked');
    expect(res.body.id).not.toBe(first.body.id);
    expect((await inbox.doc(res.body.id as string).get()).data()).toMatchObject({
      reason: 'DEAD_LETTERED',
      collidesWith: first.body.id,
      payload: { completedItems: 2 },
    });
  });

  // Found by the hostile suite: source attributes become map keys of deadLetter.attributes, and Firestore
  // refused these (500, or a transaction retried until the deadline: 503), on every redelivery.
  test.each([
    [
      'a source attribute key longer than a Firestore map key',
      { [`CloudPubSubDeadLetterSource${'x'.repeat(2_000)}`]: 'v' },
      'exceeds 512 bytes',
    ],
    ['a lone surrogate in a source attribute key', { 'CloudPubSubDeadLetterSourceA\ud800': '1' }, 'not valid Unicode'],
  ])('%s: refused with a 400, nothing stored', async (_name, attributes, error) => {
    const before = (await inbox.count().get()).data().count;
    const res = await request(server)
      .post('/')
      .send(completionEnvelope({ caseId: 'C-dl-odd-key' }, { attributes }));
    expect(res.status).toBe(400);
    expect(res.body.error).toContain(error);
    expect((await inbox.count().get()).data().count).toBe(before);
  });

  test('not a push envelope: 400, nothing stored; Firestore unreachable: 503 so the dead-letter subscription retries', async () => {
    expect((await request(server).post('/').send({ hello: 'world' })).status).toBe(400);
    const proxy = await startTcpProxy(process.env.FIRESTORE_EMULATOR_HOST ?? '', 'refuse');
    const down = firestore('dl-down', { host: proxy.host });
    try {
      const broken = deadLetterServer({ db: () => down, writeTimeoutMs: 1_000 });
      const res = await request(broken.server)
        .post('/')
        .send(completionEnvelope({ caseId: 'C-dl-down' }, { attributes: deadLetterAttributes }));
      expect(res.status).toBe(503);
    } finally {
      // The 503 left the write running (withDeadline gives up waiting, not the work): let it land before the client
      // goes, or its next retry meets a terminated client after the test, which jest reports as a failed run.
      proxy.setMode('forward');
      await waitFor('the abandoned dead-letter write to land', async () =>
        (await down.collection(INBOX).count().get()).data().count > 0 ? true : undefined,
      );
      await down.terminate();
      await proxy.close();
    }
  });
});
