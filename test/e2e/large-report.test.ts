import { PubSub } from '@google-cloud/pubsub';
import { createHash } from 'node:crypto';
import { canonicalJson } from '../../functions/src/core/hash';
import { offloadObjectName } from '../../functions/src/inbox/claim-check';
import { INBOX } from '../../functions/src/inbox/document';
import { messageDocId } from '../../functions/src/inbox/ids';
import { serveFunction, type ServedFunction } from '../../tools/local/serve-function';
import { completionOfBytes } from '../support/claims';
import { freshFirestores } from '../support/firestore';
import { startTestStorage, type TestStorage } from '../support/storage';
import { waitFor } from '../support/wait';
import { FIXTURE_ENV } from '../support/app';

/**
 * A completion report as large as Pub/Sub carries, end to end: the Pub/Sub
 * emulator pushes a TaskCompleted of 10 MiB (thousands of line items,
 * the whole of INBOX_MAX_DATA_BYTES) to the receiver served by the Functions
 * Framework, which offloads it to the storage emulator before it creates the
 * document. The document keeps the summary; the object holds the canonical
 * payload, whose SHA-256 is the document's payloadHash.
 */
const firestore = freshFirestores();
const { db, projectId } = firestore.project('large-report');
const pubsub = new PubSub({ projectId });
const BUCKET = 'large-report-payloads';
let storage: TestStorage;
let receiver: ServedFunction;

beforeAll(async () => {
  storage = await startTestStorage([BUCKET], projectId);
  receiver = await serveFunction({
    target: 'receivePubSubPush',
    env: {
      ...FIXTURE_ENV,
      GOOGLE_CLOUD_PROJECT: projectId,
      INBOX_PUSH_AUTH: 'disabled',
      INBOX_PAYLOAD_BUCKET: BUCKET,
      ...storage.env,
    },
  });
  const [topic] = await pubsub.createTopic('fixture-results');
  await topic.createSubscription('fixture-results-push', {
    pushConfig: { pushEndpoint: receiver.url },
    ackDeadlineSeconds: 30,
    retryPolicy: { minimumBackoff: { seconds: 1 }, maximumBackoff: { seconds: 2 } },
  });
}, 60_000);

firestore.beforeTerminate(async () => {
  await pubsub.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await receiver?.stop();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- as above
  await storage?.stop();
});

test('a 10 MiB TaskCompleted pushed by Pub/Sub is offloaded: summary on the document, the payload in the bucket', async () => {
  // The data as large as INBOX_MAX_DATA_BYTES (10 MiB) allows; its attribute and the envelope fit the allowance.
  const payload = completionOfBytes('C-large', 10 * 1024 * 1024, { eventId: 'evt-large' });
  const items = (payload.lineItems as unknown[]).length;
  expect(items).toBeGreaterThan(10_000);
  const data = Buffer.from(JSON.stringify(payload));
  expect(data.length).toBe(10 * 1024 * 1024);
  await pubsub.topic('fixture-results').publishMessage({ data, attributes: { eventType: 'TaskCompleted' } });

  const id = messageDocId('TaskCompleted', 'C-large', 'evt-large');
  const doc = await waitFor(`inbox/${id}`, async () => (await db.collection(INBOX).doc(id).get()).data(), {
    timeoutMs: 60_000,
    everyMs: 250,
  });
  const hash = createHash('sha256').update(canonicalJson(payload)).digest('hex');
  expect(doc).toMatchObject({ status: 'OPEN', reason: null, payloadHash: hash, rawData: null, rawDataChunks: 0 });
  expect(doc.payload).toEqual({
    caseId: 'C-large',
    completedItems: items,
    completionTimestamp: payload.completionTimestamp,
    eventId: 'evt-large',
  });
  expect(doc.offloaded).toMatchObject({
    bucket: BUCKET,
    object: offloadObjectName(id, hash),
    bytes: data.length,
    variable: 'caseReport',
  });

  const objects = storage.emulator.objects(BUCKET);
  expect(objects.map((o) => o.name)).toEqual([offloadObjectName(id, hash)]);
  expect(
    createHash('sha256')
      .update(objects[0]?.data ?? Buffer.alloc(0))
      .digest('hex'),
  ).toBe(hash);
  expect(objects[0]?.contentType).toBe('application/json');
  expect(String(doc.offloaded.uri)).toBe(
    `gs://${BUCKET}/${offloadObjectName(id, hash)}#${objects[0]?.generation ?? ''}`,
  );
  // Stored on the first delivery, within its deadline: the receiver's line comes after the document is visible.
  await waitFor('the receiver\'s "message stored" line', async () =>
    receiver.logs.some((l) => l.message === 'message stored' && l.inboxId === id) ? true : undefined,
  );
  expect(receiver.logs.filter((l) => String(l.message).includes('not acked'))).toEqual([]);
}, 120_000);
