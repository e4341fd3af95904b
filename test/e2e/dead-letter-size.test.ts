import { PubSub } from '@google-cloud/pubsub';
import { randomBytes } from 'node:crypto';
import { INBOX, RAW_CHUNKS } from '../../functions/src/inbox/document';
import { invalidDocId, messageDocId } from '../../functions/src/inbox/ids';
import { serveFunction, type ServedFunction } from '../../tools/local/serve-function';
import { freshFirestores } from '../support/firestore';
import { completion } from '../support/push';
import { waitFor } from '../support/wait';
import { FIXTURE_ENV } from '../support/app';

/**
 * receiveDeadLetter keeps what it is given, on the Pub/Sub emulator: the
 * receiver runs with a small INBOX_MAX_DATA_BYTES (a lowered limit) and
 * answers 413 to every delivery of two large messages; Pub/Sub gives up
 * after the maximum attempts and forwards them to the dead-letter topic,
 * whose push subscription delivers them to receiveDeadLetter, deployed
 * with the same small limit. Both end PARKED / DEAD_LETTERED with their
 * data: the unreadable one byte for byte from rawChunks, the readable one
 * with its payload.
 */
const firestore = freshFirestores();
const { db, projectId } = firestore.project('dl-size');
const pubsub = new PubSub({ projectId });
const LIMIT = 64 * 1024;
let receiver: ServedFunction;
let deadLetter: ServedFunction;

beforeAll(async () => {
  const env = {
    ...FIXTURE_ENV,
    GOOGLE_CLOUD_PROJECT: projectId,
    INBOX_PUSH_AUTH: 'disabled',
    INBOX_MAX_DATA_BYTES: String(LIMIT),
  };
  [receiver, deadLetter] = await Promise.all([
    serveFunction({ target: 'receivePubSubPush', env }),
    serveFunction({ target: 'receiveDeadLetter', env }),
  ]);
  const [topic] = await pubsub.createTopic('fixture-results');
  const [dlt] = await pubsub.createTopic('fixture-dlt');
  await dlt.createSubscription('fixture-dlt-push', { pushConfig: { pushEndpoint: deadLetter.url } });
  await topic.createSubscription('fixture-results-push', {
    pushConfig: { pushEndpoint: receiver.url },
    deadLetterPolicy: { deadLetterTopic: dlt.name, maxDeliveryAttempts: 5 },
    retryPolicy: { minimumBackoff: { seconds: 0 }, maximumBackoff: { seconds: 1 } },
  });
});

firestore.beforeTerminate(async () => {
  await pubsub.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await Promise.all([receiver?.stop(), deadLetter?.stop()]);
});

test('messages the receiver refused for their size end PARKED / DEAD_LETTERED with their data', async () => {
  const topic = pubsub.topic('fixture-results');
  // 3.5 MiB of random bytes: not UTF-8, so unreadable; five 768 KiB chunks, two batches of writes.
  const raw = randomBytes(3.5 * 1024 * 1024);
  await topic.publishMessage({ data: raw, attributes: { eventType: 'TaskCompleted' } });
  // A readable completion, over the limit only through a field the schema does not keep.
  const padded = { ...completion({ caseId: 'C-dl-size' }), notes: 'x'.repeat(1024 * 1024) };
  await topic.publishMessage({ json: padded, attributes: { eventType: 'TaskCompleted' } });

  // An unreadable message's id is made of the dead-letter delivery's message id, which Pub/Sub assigns anew
  // when it forwards the message: found by its size instead.
  const validId = messageDocId('TaskCompleted', 'C-dl-size', 'TaskCompleted:C-dl-size');
  const [rawDoc, validDoc] = await Promise.all([
    waitFor(
      'the unreadable message in the inbox',
      async () => (await db.collection(INBOX).where('rawDataBytes', '==', raw.length).get()).docs[0],
      { timeoutMs: 110_000, everyMs: 250 },
    ),
    waitFor(
      `inbox/${validId}`,
      async () => {
        const snap = await db.collection(INBOX).doc(validId).get();
        return snap.exists ? snap : undefined;
      },
      { timeoutMs: 110_000, everyMs: 250 },
    ),
  ]);
  const rawId = rawDoc.id;
  expect(rawId).toBe(
    invalidDocId(`projects/${projectId}/subscriptions/fixture-results-push`, String(rawDoc.get('source.messageId'))),
  );

  expect(rawDoc.data()).toMatchObject({
    status: 'PARKED',
    reason: 'DEAD_LETTERED',
    rawDataForm: 'DECODED',
    rawDataBytes: raw.length,
    rawDataChunks: 5,
    rawData: null,
  });
  const chunks = await db.collection(INBOX).doc(rawId).collection(RAW_CHUNKS).orderBy('index').get();
  const bytes = Buffer.concat(chunks.docs.map((d) => Buffer.from(d.get('bytes') as Uint8Array)));
  expect(bytes.equals(raw)).toBe(true);
  expect(String(rawDoc.get('deadLetter.sourceSubscription'))).toContain('fixture-results-push');

  expect(validDoc.data()).toMatchObject({
    status: 'PARKED',
    reason: 'DEAD_LETTERED',
    correlationKey: 'C-dl-size',
    payload: completion({ caseId: 'C-dl-size' }),
  });

  // Every delivery the receiver saw was a 413 for the size, logged for the metric; receiveDeadLetter refused
  // no delivery (the one GET each function answers 405 is serveFunction's readiness probe).
  const refusals = (logs: ReadonlyArray<Record<string, unknown>>) =>
    logs.filter((l) => l.message === 'request rejected' && l.status !== 405);
  expect(refusals(receiver.logs).length).toBeGreaterThanOrEqual(8);
  for (const line of refusals(receiver.logs))
    expect(line).toMatchObject({ status: 413, reason: 'BODY_TOO_LARGE', function: 'receivePubSubPush' });
  expect(refusals(deadLetter.logs)).toEqual([]);
}, 150_000);
