import { PubSub } from '@google-cloud/pubsub';
import { INBOX } from '../../functions/src/inbox/document';
import { messageDocId } from '../../functions/src/inbox/ids';
import { startTcpProxy, type TcpProxy } from '../../tools/faults/tcp-proxy';
import { serveFunction, type ServedFunction } from '../../tools/local/serve-function';
import { freshFirestores } from '../support/firestore';
import { completion } from '../support/push';
import { waitFor } from '../support/wait';
import { FIXTURE_ENV } from '../support/app';

/**
 * Dead-lettering end to end on the Pub/Sub emulator: the receiver fails
 * technically on every delivery (its Firestore line is cut), Pub/Sub gives up
 * after the maximum attempts and forwards the message to the dead-letter
 * topic, whose push subscription delivers it to receiveDeadLetter.
 */
const firestore = freshFirestores();
const { db, projectId } = firestore.project('dl-e2e');
const pubsub = new PubSub({ projectId });
let proxy: TcpProxy;
let receiver: ServedFunction;
let deadLetter: ServedFunction;

beforeAll(async () => {
  proxy = await startTcpProxy(process.env.FIRESTORE_EMULATOR_HOST ?? '', 'refuse');
  const env = {
    ...FIXTURE_ENV,
    GOOGLE_CLOUD_PROJECT: projectId,
    INBOX_PUSH_AUTH: 'disabled',
    INBOX_WRITE_TIMEOUT_MS: '1000',
  };
  [receiver, deadLetter] = await Promise.all([
    serveFunction({ target: 'receivePubSubPush', env: { ...env, FIRESTORE_EMULATOR_HOST: proxy.host } }),
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
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await proxy?.close();
});

test('after the maximum delivery attempts the message arrives through the dead-letter topic and is kept PARKED / DEAD_LETTERED', async () => {
  await pubsub
    .topic('fixture-results')
    .publishMessage({ json: completion({ caseId: 'C-dlq' }), attributes: { eventType: 'TaskCompleted' } });
  const id = messageDocId('TaskCompleted', 'C-dlq', 'TaskCompleted:C-dlq');
  const doc = await waitFor(
    'the dead-lettered document',
    async () => {
      const snap = await db.collection(INBOX).doc(id).get();
      return snap.exists ? snap.data() : undefined;
    },
    { timeoutMs: 90_000, everyMs: 250 },
  );
  expect(doc).toMatchObject({
    status: 'PARKED',
    reason: 'DEAD_LETTERED',
    correlationKey: 'C-dlq',
    payload: completion({ caseId: 'C-dlq' }),
  });
  expect(String(doc.deadLetter?.sourceSubscription)).toContain('fixture-results-push');
  // The receiver answered 503 on every attempt it saw.
  const refusals = receiver.logs.filter((l) => String(l.message).includes('not acked'));
  expect(refusals.length).toBeGreaterThanOrEqual(4);
}, 120_000);
