import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PubSub, type Subscription, type Topic } from '@google-cloud/pubsub';
import { loadConfig } from '../../functions/src/config';
import type { Engine } from '../../functions/src/engine/engine';
import { refs } from '../../functions/src/engine/store/collections';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { createLogger } from '../../functions/src/log';
import { relayBatch } from '../../functions/src/relay/relay-batch';
import { roundsEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { TEST_REGISTRY } from '../support/inbox';
import { completion } from '../support/push';
import { testReceiver } from '../support/receiver';
import { expireAsTtlWould } from '../support/ttl';
import { waitFor } from '../support/wait';

/**
 * The replay as Pub/Sub does it: a push subscription that retains acked
 * messages is rewound with a seek to a time before the messages were
 * published, long after they were processed and their DONE documents
 * expired. The Pub/Sub emulator supports both (retainAckedMessages and
 * seek to a time) and pushes the messages again; every one is answered
 * `duplicate` and nothing is stored or correlated.
 */
const DAY = 86_400_000;
const firestore = freshFirestores();
const { db, projectId } = firestore.project('replay-seek');
const pubsub = new PubSub({ projectId });
const config = loadConfig({ GOOGLE_CLOUD_PROJECT: projectId });
let clock = Date.now();
const now = (): Date => new Date(clock);
const receiver = testReceiver(db, { registry: TEST_REGISTRY, now });
let server: Server;
let topic: Topic;
let subscription: Subscription;
let engine: Engine;

beforeAll(async () => {
  engine = await roundsEngine();
  server = receiver.server.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const { port } = server.address() as AddressInfo;
  [topic] = await pubsub.createTopic('fixture-events');
  [subscription] = await topic.createSubscription('fixture-events-push', {
    pushConfig: { pushEndpoint: `http://127.0.0.1:${port}/` },
    ackDeadlineSeconds: 10,
    retainAckedMessages: true,
    messageRetentionDuration: { seconds: 7 * 24 * 3_600 },
  });
});
firestore.beforeTerminate(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await subscription?.delete().catch(() => undefined);
  await pubsub.close();
  await new Promise((resolve) => server.close(resolve));
});

const relayAll = (): ReturnType<typeof relayBatch> =>
  relayBatch(
    {
      db,
      engine,
      policy: config.relay.policy,
      retentionMs: config.relay.retentionMs,
      recordRetentionMs: config.relay.recordRetentionMs,
      transactionTimeoutMs: 20_000,
      now,
      random: () => 0.5,
    },
    { jobs: { enqueue: async () => 'CREATED' }, timers: { enqueue: async () => 'CREATED' } },
    createLogger(() => undefined),
    { budgetMs: 30_000, parallelism: 4, batchSize: 50, shards: 16 },
  );
const outcomes = (messageIds: readonly string[], outcome: string): Array<Record<string, unknown>> =>
  receiver.logs.filter((l) => l.outcome === outcome && messageIds.includes(String(l.messageId)));

test('seek back after the DONE documents expired: Pub/Sub pushes every message again, each is a duplicate, nothing is stored or correlated', async () => {
  const key = 'C-seek';
  const instanceId = (
    await startProcessInstance(db, engine, {
      processKey: 'rounds',
      businessKey: key,
      variables: { caseId: key },
      now: now(),
    })
  ).instance.id;
  // Before the first publish, in the emulator's clock (the real one): where the seek rewinds to.
  const beforePublish = new Date(Date.now() - 1_000);
  const messageIds = [
    await topic.publishMessage({
      json: { caseId: key, eventId: 'seek-s-1' },
      attributes: { eventType: 'ExecutionStarted' },
    }),
    await topic.publishMessage({
      json: completion({ caseId: key, eventId: 'seek-c-1' }),
      attributes: { eventType: 'TaskCompleted' },
    }),
  ];
  await waitFor('both messages stored', async () => (outcomes(messageIds, 'stored').length === 2 ? true : undefined));
  await relayAll();
  const before = (await refs.instance(db, instanceId).get()).data() ?? {};
  expect(before).toMatchObject({ variables: { rounds: 1 } });
  expect(before.correlatedMessages).toHaveLength(2);

  clock += 8 * DAY;
  expect(await expireAsTtlWould(db, now())).toMatchObject({ 'inbox.expireAt': 2, 'processedMessages.expireAt': 0 });

  await subscription.seek(beforePublish);
  // Answered either way: as duplicates (the records), or stored anew (what a replay did before them).
  await waitFor('both messages pushed again and answered', async () =>
    outcomes(messageIds, 'duplicate').length + outcomes(messageIds, 'stored').length >= 4 ? true : undefined,
  );
  expect(outcomes(messageIds, 'stored')).toHaveLength(2);
  expect(outcomes(messageIds, 'duplicate').map((l) => l.documentExists)).toEqual([false, false]);
  expect((await db.collection(INBOX).where('correlationKey', '==', key).get()).size).toBe(0);
  expect((await relayAll()).correlated).toBe(0);
  expect((await refs.instance(db, instanceId).get()).data()).toEqual(before);
});
