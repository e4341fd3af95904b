import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { loadConfig } from '../../functions/src/config';
import { DEAD_LETTER_MAX_BODY_BYTES } from '../../functions/src/deadletter/receive-dead-letter';
import { INBOX, RAW_CHUNKS } from '../../functions/src/inbox/document';
import { invalidDocId, messageDocId } from '../../functions/src/inbox/ids';
import { completionOfBytes } from '../support/claims';
import { receiveDeadLetterFunction, receivePubSubPushFunction } from '../../functions/src/wiring';
import { createRuntime } from '../../functions/src/runtime';
import { freshFirestores } from '../support/firestore';
import { envelope } from '../support/push';
import { sha256Hex } from '../../functions/src/core/hash';
import { startTestStorage, type TestStorage } from '../support/storage';
import { cliFor } from '../cli/run-cli';
import { FIXTURE_ENV } from '../support/app';

/**
 * receiveDeadLetter's size limit, through the wiring deploy.sh runs
 * (functions/src/wiring.ts): INBOX_MAX_DATA_BYTES binds the
 * receiver only; the dead-letter endpoint refuses only what Pub/Sub could
 * never send. The whole road through the Pub/Sub emulator:
 * test/e2e/dead-letter-size.test.ts.
 */
const { db, projectId } = freshFirestores().project('dl-size-wired');
// Before the runtime: its storage client reads STORAGE_EMULATOR_HOST when it is first made.
let storage: TestStorage | undefined;
beforeAll(async () => {
  storage = await startTestStorage([`${projectId}-inbox-payloads`]);
});
afterAll(async () => {
  await storage?.stop();
});
const config = loadConfig({
  ...FIXTURE_ENV,
  GOOGLE_CLOUD_PROJECT: projectId,
  INBOX_PUSH_AUTH: 'disabled',
  INBOX_MAX_DATA_BYTES: String(64 * 1024),
});
const runtime = createRuntime(config);
http('receiverSizeWired', receivePubSubPushFunction(config, runtime));
http('deadLetterSizeWired', receiveDeadLetterFunction(config, runtime));
const receiver = getTestServer('receiverSizeWired');
const deadLetter = getTestServer('deadLetterSizeWired');

// createRuntime makes production's own client; freshFirestores ends only the test's.
afterAll(async () => {
  await runtime.db().terminate();
});

const SOURCE = {
  CloudPubSubDeadLetterSourceSubscription: 'fixture-results-push',
  CloudPubSubDeadLetterSourceSubscriptionProject: projectId,
  CloudPubSubDeadLetterSourceDeliveryCount: '10',
};

test("the ceiling is Pub/Sub's: the receiver's limit at the default INBOX_MAX_DATA_BYTES (10 MiB)", () => {
  expect(DEAD_LETTER_MAX_BODY_BYTES).toBe(loadConfig({ GOOGLE_CLOUD_PROJECT: projectId }).maxBodyBytes);
});

test('a message over a lowered INBOX_MAX_DATA_BYTES: 413 at the receiver, kept by receiveDeadLetter with its bytes', async () => {
  const data = randomBytes(1024 * 1024);
  const body = envelope({
    data: data.toString('base64'),
    attributes: { eventType: 'TaskCompleted', ...SOURCE },
    messageId: 'dl-size-1',
  });
  const refused = await request(receiver).post('/').send(body);
  expect(refused.status).toBe(413);
  const kept = await request(deadLetter).post('/').send(body);
  expect(kept.status).toBe(200);
  const id = invalidDocId(`projects/${projectId}/subscriptions/fixture-results-push`, 'dl-size-1');
  expect(kept.body).toEqual({ outcome: 'parked', id });
  expect((await db.collection(INBOX).doc(id).get()).data()).toMatchObject({
    status: 'PARKED',
    reason: 'DEAD_LETTERED',
    rawDataBytes: data.length,
    rawDataChunks: 2,
  });
  const chunks = await db.collection(INBOX).doc(id).collection(RAW_CHUNKS).orderBy('index').get();
  expect(Buffer.concat(chunks.docs.map((d) => Buffer.from(d.get('bytes') as Uint8Array))).equals(data)).toBe(true);
});

test('a valid completion of 10 MiB (thousands of line items) is kept as the receiver keeps it: offloaded to the payload bucket, its summary on the document', async () => {
  const payload = completionOfBytes('C-dl-large', 10 * 1024 * 1024 - 4_096, { eventId: 'evt-dl-large' });
  const data = Buffer.from(JSON.stringify(payload));
  const body = envelope({
    data: data.toString('base64'),
    attributes: { eventType: 'TaskCompleted', ...SOURCE },
    messageId: 'dl-size-large',
  });
  const kept = await request(deadLetter).post('/').send(body);
  expect(kept.status).toBe(200);
  const id = messageDocId('TaskCompleted', 'C-dl-large', 'evt-dl-large');
  expect(kept.body).toEqual({ outcome: 'parked', id });
  const doc = (await db.collection(INBOX).doc(id).get()).data();
  expect(doc).toMatchObject({
    status: 'PARKED',
    reason: 'DEAD_LETTERED',
    rawDataChunks: 0,
    offloaded: { bucket: `${projectId}-inbox-payloads`, bytes: 10 * 1024 * 1024 - 4_096, variable: 'caseReport' },
  });
  expect(doc?.payload).toEqual({
    caseId: 'C-dl-large',
    completedItems: payload.completedItems,
    completionTimestamp: payload.completionTimestamp,
    eventId: 'evt-dl-large',
  });
  expect((await db.collection(INBOX).doc(id).collection(RAW_CHUNKS).get()).size).toBe(0);
  // A requeue hands the process the whole report: the object holds the canonical payload the document's hash names.
  const object = storage?.emulator.objects(`${projectId}-inbox-payloads`).find((o) => o.name === doc?.offloaded.object);
  expect(object).toBeDefined();
  const [bytes] = await (storage as TestStorage).client
    .bucket(`${projectId}-inbox-payloads`)
    .file(String(doc?.offloaded.object))
    .download();
  expect(sha256Hex(bytes)).toBe(doc?.payloadHash);
  // Delivered again (the dead-letter subscription retries): recorded once, still one object.
  expect((await request(deadLetter).post('/').send(body)).body).toEqual({ outcome: 'recorded', id });
  expect(
    storage?.emulator.objects(`${projectId}-inbox-payloads`).filter((o) => o.name.startsWith(`payloads/${id}/`)),
  ).toHaveLength(1);
}, 60_000);

test('a body Pub/Sub could never send (over 10 MiB of data plus the envelope) is still refused: 413', async () => {
  const body = envelope({ data: 'A'.repeat(DEAD_LETTER_MAX_BODY_BYTES), attributes: SOURCE });
  const res = await request(deadLetter).post('/').send(body);
  expect(res.status).toBe(413);
  expect(res.body.error).toContain(`body exceeds ${DEAD_LETTER_MAX_BODY_BYTES} bytes`);
});

test('the payload bucket down: the dead letter is kept in rawChunks, and `inbox requeue` offloads it before reopening it', async () => {
  const bucket = `${projectId}-inbox-payloads`;
  const payload = completionOfBytes('C-dl-nobucket', 1024 * 1024, { eventId: 'evt-dl-nobucket' });
  const data = Buffer.from(JSON.stringify(payload));
  const body = envelope({
    data: data.toString('base64'),
    attributes: { eventType: 'TaskCompleted', ...SOURCE },
    messageId: 'dl-size-nobucket',
  });
  const id = messageDocId('TaskCompleted', 'C-dl-nobucket', 'evt-dl-nobucket');
  const emulator = (storage as TestStorage).emulator;
  const heal = emulator.faults.failNext(1_000, 503, (r) => r.method === 'POST');
  let kept;
  try {
    kept = await request(deadLetter).post('/').send(body);
  } finally {
    heal();
  }
  expect(kept.body).toEqual({ outcome: 'parked', id });
  const parked = (await db.collection(INBOX).doc(id).get()).data();
  expect(parked).toMatchObject({
    status: 'PARKED',
    reason: 'DEAD_LETTERED',
    offloaded: null,
    rawDataBytes: data.length,
  });
  expect(emulator.objects(bucket).filter((o) => o.name.startsWith(`payloads/${id}/`))).toHaveLength(0);

  const cli = cliFor(projectId, undefined, { STORAGE_EMULATOR_HOST: (storage as TestStorage).url });
  // What an operator sees first: `show --raw` writes the whole message from the chunks, not the document's summary.
  const file = join(mkdtempSync(join(tmpdir(), 'dl-raw-')), 'raw.json');
  expect((await cli('show', id, '--raw', file)).code).toBe(0);
  expect(readFileSync(file).equals(data)).toBe(true);
  const run = await cli('requeue', id);
  expect(run.code).toBe(0);
  const reopened = (await db.collection(INBOX).doc(id).get()).data();
  expect(reopened).toMatchObject({
    status: 'OPEN',
    offloaded: { bucket, bytes: 1024 * 1024, variable: 'caseReport' },
    rawDataChunks: 0,
    rawDataBytes: 0,
  });
  // The chunks go with it: nothing would ever delete them once the document is swept.
  expect((await db.collection(INBOX).doc(id).collection(RAW_CHUNKS).get()).size).toBe(0);
  const [bytes] = await (storage as TestStorage).client
    .bucket(bucket)
    .file(String(reopened?.offloaded.object))
    .download();
  expect(sha256Hex(bytes)).toBe(reopened?.payloadHash);
}, 60_000);

test('a dead-lettered collision kept in rawChunks: `inbox repair admit-collision` offloads it as requeue does', async () => {
  const bucket = `${projectId}-inbox-payloads`;
  const first = completionOfBytes('C-dl-coll', 4 * 1024, { eventId: 'evt-dl-coll' });
  expect(
    (
      await request(receiver)
        .post('/')
        .send(
          envelope({
            data: Buffer.from(JSON.stringify(first)).toString('base64'),
            attributes: { eventType: 'TaskCompleted' },
            messageId: 'dl-coll-1',
          }),
        )
    ).status,
  ).toBe(200);
  const second = completionOfBytes('C-dl-coll', 1024 * 1024, { eventId: 'evt-dl-coll' });
  const body = envelope({
    data: Buffer.from(JSON.stringify(second)).toString('base64'),
    attributes: { eventType: 'TaskCompleted', ...SOURCE },
    messageId: 'dl-coll-2',
  });
  const heal = (storage as TestStorage).emulator.faults.failNext(1_000, 503, (r) => r.method === 'POST');
  let kept;
  try {
    kept = await request(deadLetter).post('/').send(body);
  } finally {
    heal();
  }
  const id = String(kept.body.id);
  expect((await db.collection(INBOX).doc(id).get()).data()).toMatchObject({
    status: 'PARKED',
    reason: 'DEAD_LETTERED',
    offloaded: null,
    collidesWith: messageDocId('TaskCompleted', 'C-dl-coll', 'evt-dl-coll'),
  });

  const run = await cliFor(projectId, undefined, { STORAGE_EMULATOR_HOST: (storage as TestStorage).url })(
    'repair',
    'admit-collision',
    id,
    '--note',
    'a second report of its own',
  );
  expect(run.code).toBe(0);
  const admitted = (await db.collection(INBOX).doc(id).get()).data();
  expect(admitted).toMatchObject({ status: 'OPEN', rawDataChunks: 0, offloaded: { bucket, bytes: 1024 * 1024 } });
  const [bytes] = await (storage as TestStorage).client
    .bucket(bucket)
    .file(String(admitted?.offloaded.object))
    .download();
  expect(sha256Hex(bytes)).toBe(admitted?.payloadHash);
  expect((await db.collection(INBOX).doc(id).collection(RAW_CHUNKS).get()).size).toBe(0);
}, 60_000);

test('a payload bucket that hangs: the dead letter falls back to rawChunks within the write deadline, answered 200', async () => {
  const payload = completionOfBytes('C-dl-hang', 1024 * 1024, { eventId: 'evt-dl-hang' });
  const data = Buffer.from(JSON.stringify(payload));
  const body = envelope({
    data: data.toString('base64'),
    attributes: { eventType: 'TaskCompleted', ...SOURCE },
    messageId: 'dl-size-hang',
  });
  const id = messageDocId('TaskCompleted', 'C-dl-hang', 'evt-dl-hang');
  // Each upload waits longer than the whole 8 s write deadline: without its own deadline the offload would use it all.
  const heal = (storage as TestStorage).emulator.faults.slow(20_000, (r) => r.method === 'POST');
  const started = Date.now();
  let kept;
  try {
    kept = await request(deadLetter).post('/').send(body);
  } finally {
    heal();
  }
  expect(kept.status).toBe(200);
  expect(Date.now() - started).toBeLessThan(8_000);
  expect((await db.collection(INBOX).doc(id).get()).data()).toMatchObject({
    status: 'PARKED',
    reason: 'DEAD_LETTERED',
    offloaded: null,
    rawDataBytes: data.length,
  });
}, 60_000);
