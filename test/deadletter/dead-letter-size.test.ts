import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { loadConfig } from '../../functions/src/config';
import { DEAD_LETTER_MAX_BODY_BYTES } from '../../functions/src/deadletter/receive-dead-letter';
import { INBOX, RAW_CHUNKS } from '../../functions/src/inbox/document';
import { invalidDocId, messageDocId } from '../../functions/src/inbox/ids';
import { completionOfBytes } from '../support/claims';
import { createReceiveDeadLetter, createReceivePubSubPush } from '../../functions/src/wiring';
import { createRuntime } from '../../functions/src/runtime';
import { freshFirestores } from '../support/firestore';
import { envelope } from '../support/push';

/**
 * receiveDeadLetter's size limit, through the wiring deploy.sh runs
 * (functions/src/wiring.ts): INBOX_MAX_DATA_BYTES binds the
 * receiver only; the dead-letter endpoint refuses only what Pub/Sub could
 * never send. The whole road through the Pub/Sub emulator:
 * test/e2e/dead-letter-size.test.ts.
 */
const { db, projectId } = freshFirestores().project('dl-size-wired');
const config = loadConfig({ GOOGLE_CLOUD_PROJECT: projectId, INBOX_PUSH_AUTH: 'disabled', INBOX_MAX_DATA_BYTES: String(64 * 1024) });
const runtime = createRuntime(config);
http('receiverSizeWired', createReceivePubSubPush(config, runtime));
http('deadLetterSizeWired', createReceiveDeadLetter(config, runtime));
const receiver = getTestServer('receiverSizeWired');
const deadLetter = getTestServer('deadLetterSizeWired');

// createRuntime makes production's own client; freshFirestores ends only the test's.
afterAll(async () => {
  await runtime.db().terminate();
});

const SOURCE = { CloudPubSubDeadLetterSourceSubscription: 'work-order-completed-push', CloudPubSubDeadLetterSourceSubscriptionProject: projectId, CloudPubSubDeadLetterSourceDeliveryCount: '10' };

test("the ceiling is Pub/Sub's: the receiver's limit at the default INBOX_MAX_DATA_BYTES (10 MiB)", () => {
  expect(DEAD_LETTER_MAX_BODY_BYTES).toBe(loadConfig({ GOOGLE_CLOUD_PROJECT: projectId }).maxBodyBytes);
});

test('a message over a lowered INBOX_MAX_DATA_BYTES: 413 at the receiver, kept by receiveDeadLetter with its bytes', async () => {
  const data = randomBytes(1024 * 1024);
  const body = envelope({ data: data.toString('base64'), attributes: { eventType: 'WorkOrderCompleted', ...SOURCE }, messageId: 'dl-size-1' });
  const refused = await request(receiver).post('/').send(body);
  expect(refused.status).toBe(413);
  const kept = await request(deadLetter).post('/').send(body);
  expect(kept.status).toBe(200);
  const id = invalidDocId(`projects/${projectId}/subscriptions/work-order-completed-push`, 'dl-size-1');
  expect(kept.body).toEqual({ outcome: 'parked', id });
  expect((await db.collection(INBOX).doc(id).get()).data()).toMatchObject({ status: 'PARKED', reason: 'DEAD_LETTERED', rawDataBytes: data.length, rawDataChunks: 2 });
  const chunks = await db.collection(INBOX).doc(id).collection(RAW_CHUNKS).orderBy('index').get();
  expect(Buffer.concat(chunks.docs.map((d) => Buffer.from(d.get('bytes') as Uint8Array))).equals(data)).toBe(true);
});

test('a valid completion of 10 MiB (thousands of line items) is kept: its summary on the document, its bytes in rawChunks', async () => {
  // The dead-letter path does not offload: like an unreadable message, it keeps the bytes in Firestore.
  const payload = completionOfBytes('WO-dl-large', 10 * 1024 * 1024 - 4_096, { eventId: 'evt-dl-large' });
  const data = Buffer.from(JSON.stringify(payload));
  const body = envelope({ data: data.toString('base64'), attributes: { eventType: 'WorkOrderCompleted', ...SOURCE }, messageId: 'dl-size-large' });
  const kept = await request(deadLetter).post('/').send(body);
  expect(kept.status).toBe(200);
  const id = messageDocId('WorkOrderCompleted', 'WO-dl-large', 'evt-dl-large');
  expect(kept.body).toEqual({ outcome: 'parked', id });
  const doc = (await db.collection(INBOX).doc(id).get()).data();
  expect(doc).toMatchObject({ status: 'PARKED', reason: 'DEAD_LETTERED', rawDataForm: 'DECODED', rawDataBytes: data.length, rawDataChunks: Math.ceil(data.length / (768 * 1024)), offloaded: null });
  expect(doc?.payload).toEqual({ workOrderId: 'WO-dl-large', completedItems: payload.completedItems, completionTimestamp: payload.completionTimestamp, eventId: 'evt-dl-large' });
  const chunks = await db.collection(INBOX).doc(id).collection(RAW_CHUNKS).orderBy('index').get();
  expect(Buffer.concat(chunks.docs.map((d) => Buffer.from(d.get('bytes') as Uint8Array))).equals(data)).toBe(true);
}, 60_000);

test('a body Pub/Sub could never send (over 10 MiB of data plus the envelope) is still refused: 413', async () => {
  const body = envelope({ data: 'A'.repeat(DEAD_LETTER_MAX_BODY_BYTES), attributes: SOURCE });
  const res = await request(deadLetter).post('/').send(body);
  expect(res.status).toBe(413);
  expect(res.body.error).toContain(`body exceeds ${DEAD_LETTER_MAX_BODY_BYTES} bytes`);
});
