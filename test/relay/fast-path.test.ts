import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import request from 'supertest';
import { loadConfig } from '../../functions/src/config';
import { refs } from '../../functions/src/engine/store/collections';
import { INBOX } from '../../functions/src/inbox/document';
import { createLogger } from '../../functions/src/log';
import { createRelayHandler } from '../../functions/src/relay/relay-inbox';
import { relayQueue } from '../../functions/src/tasks/job-queue';
import { emulatorClient } from '@inbox/cloud-tasks-emulator';
import { freshFirestores } from '../support/firestore';
import { startProcessStack, type ProcessStack } from '../support/process-stack';
import { completionEnvelope } from '../support/push';
import { testReceiver, type TestReceiver } from '../support/receiver';
import { waitFor } from '../support/wait';

const firestore = freshFirestores();
const { db, projectId } = firestore.project('fast-path');
let stack: ProcessStack;
let receiver: TestReceiver;
let relayServer: ReturnType<typeof getTestServer>;
const relayLogs: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  stack = await startProcessStack(db, projectId);

  const relay = createRelayHandler({
    db: () => db,
    engine: async () => stack.engine,
    queue: () => stack.queue,
    timerQueue: () => stack.timerQueue,
    log: createLogger((l) => relayLogs.push(JSON.parse(l) as Record<string, unknown>)),
    relay: loadConfig({ GOOGLE_CLOUD_PROJECT: projectId, INBOX_PUSH_AUTH: 'disabled' }).relay,
    shards: 16,
    now: () => new Date(),
    random: Math.random,
  });
  http('relayInboxUnderTest', relay);
  relayServer = getTestServer('relayInboxUnderTest');
  await new Promise<void>((resolve) => relayServer.listen(0, '127.0.0.1', resolve));
  const address = relayServer.address();
  if (address === null || typeof address === 'string') throw new Error('no address');
  const relayUrl = `http://127.0.0.1:${address.port}/`;

  const config = loadConfig({
    GOOGLE_CLOUD_PROJECT: projectId,
    INBOX_PUSH_AUTH: 'disabled',
    INBOX_RELAY_URL: relayUrl,
    INBOX_TASKS_EMULATOR_HOST: stack.tasks.host,
  });
  const admin = emulatorClient(stack.tasks.host);
  await admin.createQueue({
    parent: `projects/${projectId}/locations/${config.tasks.location}`,
    queue: { name: `projects/${projectId}/locations/${config.tasks.location}/queues/${config.relay.queue}` },
  });
  await admin.close();
  const fast = relayQueue(config, relayUrl);
  receiver = testReceiver(db, { fastPath: (id) => fast.enqueue(id) });
});

firestore.beforeTerminate(async () => {
  await stack.stop();
  await new Promise((resolve) => relayServer.close(resolve));
});

describe('fast path and scheduled relay', () => {
  test('a stored completion is relayed within seconds by its own Cloud Task, and the case completes', async () => {
    const start = await request(stack.startServer)
      .post('/')
      .send({ processKey: 'fixture-process', businessKey: 'C-fast', variables: { caseId: 'C-fast' } });
    const instanceId = start.body.processInstanceId as string;
    await waitFor('the waiting point', async () =>
      (await refs.correlationKey(db, 'C-fast').get()).exists ? true : undefined,
    );

    const res = await request(receiver.server)
      .post('/')
      .send(completionEnvelope({ caseId: 'C-fast' }));
    expect(res.status).toBe(200);
    const inboxId = res.body.id as string;
    // The task is named after the document.
    expect(
      stack.tasks.dispatchLog.some((r) => r.task.endsWith(`/tasks/${inboxId}`)) ||
        stack.tasks.tasks().some((t) => t.name.endsWith(`/tasks/${inboxId}`)),
    ).toBe(true);
    await waitFor(
      'DONE through the fast path',
      async () => ((await db.collection(INBOX).doc(inboxId).get()).get('status') === 'DONE' ? true : undefined),
      { timeoutMs: 10_000 },
    );
    await waitFor('COMPLETED', async () =>
      (await refs.instance(db, instanceId).get()).get('status') === 'COMPLETED' ? true : undefined,
    );
  });

  test('a failing fast path never changes the receiver answer', async () => {
    const broken = testReceiver(db, { fastPath: async () => Promise.reject(new Error('Cloud Tasks unavailable')) });
    const res = await request(broken.server)
      .post('/')
      .send(completionEnvelope({ caseId: 'C-fast-broken' }));
    expect(res.status).toBe(200);
    expect(res.body.outcome).toBe('stored');
    expect(broken.logs.some((l) => String(l.message).includes('fast-path relay task not created'))).toBe(true);
  });

  test('the scheduled call answers with its summary and the gauges, and logs them once', async () => {
    const res = await request(relayServer).post('/').send({});
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      rounds: expect.any(Number),
      candidates: expect.any(Number),
      gauges: { open: expect.any(Number), parked: expect.any(Number) },
    });
    // C-fast-broken has no process: it is OPEN (retrying), so the oldest OPEN document has an age.
    expect(res.body.gauges.open).toBeGreaterThanOrEqual(1);
    expect(res.body.gauges.oldestOpenAgeSeconds).toEqual(expect.any(Number));
    expect(relayLogs.filter((l) => l.message === 'relay summary')).toHaveLength(1);
    expect((await request(relayServer).get('/')).status).toBe(405);
    expect((await request(relayServer).post('/').send({ inboxId: 'nope' })).status).toBe(400);
  });
});
