import { PubSub, type Topic } from '@google-cloud/pubsub';
import { INBOX } from '../../functions/src/inbox/document';
import { messageDocId } from '../../functions/src/inbox/ids';
import { startTcpProxy, type TcpProxy } from '../../tools/faults/tcp-proxy';
import { serveFunction, type ServedFunction } from '../../tools/local/serve-function';
import { freshFirestores } from '../support/firestore';
import { completion } from '../support/push';
import { waitFor } from '../support/wait';
import { FIXTURE_ENV } from '../support/app';

/**
 * End to end: the real Pub/Sub emulator pushes to the receiver running under
 * the Functions Framework CLI on a loopback port, which writes to the real
 * Firestore emulator (through a proxy, so the test can cut the line).
 */
const firestore = freshFirestores();
const { db, projectId } = firestore.project('e2e');
const pubsub = new PubSub({ projectId });
let proxy: TcpProxy;
let receiver: ServedFunction;
let topic: Topic;

beforeAll(async () => {
  proxy = await startTcpProxy(process.env.FIRESTORE_EMULATOR_HOST ?? '');
  receiver = await serveFunction({
    target: 'receivePubSubPush',
    env: {
      ...FIXTURE_ENV,
      GOOGLE_CLOUD_PROJECT: projectId,
      INBOX_PUSH_AUTH: 'disabled',
      FIRESTORE_EMULATOR_HOST: proxy.host,
      INBOX_WRITE_TIMEOUT_MS: '1500',
    },
  });
  [topic] = await pubsub.createTopic('fixture-results');
  const [deadLetter] = await pubsub.createTopic('fixture-dlt');
  await topic.createSubscription('fixture-results-push', {
    pushConfig: { pushEndpoint: receiver.url },
    ackDeadlineSeconds: 10,
    deadLetterPolicy: { deadLetterTopic: deadLetter.name, maxDeliveryAttempts: 5 },
    retryPolicy: { minimumBackoff: { seconds: 1 }, maximumBackoff: { seconds: 2 } },
  });
});

firestore.beforeTerminate(async () => {
  await pubsub.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await receiver?.stop();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await proxy?.close();
});

async function publishCompletion(caseId: string): Promise<string> {
  return topic.publishMessage({ json: completion({ caseId }), attributes: { eventType: 'TaskCompleted' } });
}

function docFor(caseId: string): FirebaseFirestore.DocumentReference {
  return db.collection(INBOX).doc(messageDocId('TaskCompleted', caseId, `TaskCompleted:${caseId}`));
}

describe('Pub/Sub emulator → push → receiver → Firestore', () => {
  test('a published completion appears in the inbox, OPEN, with its Pub/Sub metadata', async () => {
    const messageId = await publishCompletion('C-e2e-1');
    const doc = await waitFor('the inbox document', async () => {
      const snap = await docFor('C-e2e-1').get();
      return snap.exists ? snap.data() : undefined;
    });
    expect(doc).toMatchObject({
      status: 'OPEN',
      correlationKey: 'C-e2e-1',
      source: { messageId, subscription: `projects/${projectId}/subscriptions/fixture-results-push` },
    });
  });

  test('while Firestore is unreachable the receiver answers 503; after recovery the redelivery is stored exactly once', async () => {
    proxy.setMode('refuse');
    const messageId = await publishCompletion('C-e2e-outage');
    // Pub/Sub pushes, the receiver cannot store and answers 503 (logged, not acked).
    await waitFor('a 503 from the receiver', async () =>
      // The retryable branch (WARNING, a retryable gRPC code), which push-endpoint answers 503; the unexpected one is an ERROR answered 500.
      receiver.logs.some(
        (l) =>
          l.messageId === messageId &&
          l.severity === 'WARNING' &&
          String(l.message).startsWith('technical failure, not acked'),
      )
        ? true
        : undefined,
    );
    expect((await docFor('C-e2e-outage').get()).exists).toBe(false);

    proxy.setMode('forward');
    const doc = await waitFor('the redelivered message in the inbox', async () => {
      const snap = await docFor('C-e2e-outage').get();
      return snap.exists ? snap.data() : undefined;
    });
    expect(doc.source.messageId).toBe(messageId);
    // Exactly once: one document for the key, and acks stop the redeliveries.
    const all = await db.collection(INBOX).where('correlationKey', '==', 'C-e2e-outage').get();
    expect(all.size).toBe(1);
  });
});
