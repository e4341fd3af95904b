import type { Subscription } from '@google-cloud/pubsub';
import type { Server } from 'node:http';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { emulatorClient } from '@inbox/cloud-tasks-emulator';
import { defineApp } from '../../functions/src/app';
import { loadAppEngine } from '../../functions/src/apps/app-engine';
import { checkApp } from '../../functions/src/apps/check-app';
import { registryOf } from '../../functions/src/apps/load-app';
import { loadProcessModel } from '../../functions/src/engine/deployed';
import { refs } from '../../functions/src/engine/store/collections';
import { STORED } from '../../functions/src/engine/store/converters';
import type { InstanceState } from '../../functions/src/engine/state';
import { INBOX } from '../../functions/src/inbox/document';
import { messageDocId } from '../../functions/src/inbox/ids';
import camunda8, { IN_TOPIC } from '../fixtures/apps/camunda8';
import { REPO_ROOT, stepIdsOf } from '../support/app';
import { freshFirestores } from '../support/firestore';
import { relayOnStack, startOverHttp } from '../support/pipeline';
import { jobsOf } from '../support/process-state';
import { startProcessStack, type ProcessStack } from '../support/process-stack';
import { testReceiver } from '../support/receiver';
import { waitFor } from '../support/wait';
import { waitingPointsOf } from '../support/waiting';

/**
 * The Camunda 8 models of test/fixtures/camunda8, unchanged, run as an app
 * (test/fixtures/apps/camunda8: handlers by task type, its models folder
 * that very folder) through the whole pipeline on the emulators: the app
 * check a start runs, startProcess over HTTP, every job through the Cloud
 * Tasks emulator and runJob, and the message the model waits for published
 * to the Pub/Sub emulator, pushed to the receiver (served in process on a
 * loopback port), stored in the inbox and correlated by the relay.
 */
const APP = 'test/fixtures/apps/camunda8';
const APP_DIR = join(REPO_ROOT, APP);
const MODELS = join(REPO_ROOT, 'test', 'fixtures', 'camunda8');
const TYPES = ['demo-service', 'hello_task', 'process-message', 'test', 'time-out'];

const firestore = freshFirestores();
const { db, projectId } = firestore.project('camunda8-app');
let stack: ProcessStack;
let receiver: Server;
let pushSubscription: Subscription;

beforeAll(async () => {
  stack = await startProcessStack(db, projectId, { app: { app: camunda8, folder: APP_DIR } });
  receiver = testReceiver(db, { registry: registryOf(camunda8) }).server;
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const address = receiver.address();
  if (address === null || typeof address === 'string') throw new Error('the receiver has no address');
  // The topology the deploy creates for Message_In: its topic, pushed to the receiver.
  const [message] = camunda8.messages;
  if (message === undefined) throw new Error('the app declares no message');
  const [topic] = await stack.pubsub.createTopic(message.topic);
  [pushSubscription] = await topic.createSubscription(message.subscription, {
    pushConfig: { pushEndpoint: `http://127.0.0.1:${address.port}/` },
    ackDeadlineSeconds: 10,
    retryPolicy: { minimumBackoff: { seconds: 0 }, maximumBackoff: { seconds: 1 } },
  });
});
firestore.beforeTerminate(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await pushSubscription?.delete();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  if (receiver?.listening) await new Promise((resolve) => receiver.close(resolve));
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await stack?.stop();
});

const relay = (): ReturnType<typeof relayOnStack> => relayOnStack(db, stack);
const started = (processKey: string, businessKey: string, variables: Record<string, unknown>): Promise<string> =>
  startOverHttp(stack, processKey, businessKey, variables);

const instanceOf = async (id: string): Promise<InstanceState | undefined> =>
  (await refs.instance(db, id).withConverter(STORED).get()).data() as unknown as InstanceState | undefined;

/** Waits until the instance has left RUNNING; the instance as it ended. */
const ended = (id: string): Promise<InstanceState> =>
  waitFor(`instance ${id} to end`, async () => {
    const instance = await instanceOf(id);
    return instance !== undefined && instance.status !== 'RUNNING' ? instance : undefined;
  });

/** The task types of the instance's jobs that ran to DONE, in order of creation. */
const doneTypes = async (id: string): Promise<Array<string | undefined>> =>
  (await jobsOf(db, id))
    .filter((j) => j.status === 'DONE')
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
    .map((j) => j.taskType);

describe('the app check', () => {
  test('accepts the app: every async task has its handler by task type, none is left over', async () => {
    const checked = await checkApp({ app: APP, bpmnDir: null });
    expect(checked.app.name).toBe('camunda8');
    expect(checked.modelsDir).toBe(MODELS);
    expect(checked.steps).toEqual(TYPES);
    // None of the handler keys is an element id: the lookup by task type is what finds them.
    const files = (await readdir(MODELS)).filter((f) => f.endsWith('.bpmn'));
    expect(files).toHaveLength(5);
    const models = await Promise.all(files.map((f) => loadProcessModel(join(MODELS, f))));
    const nodeIds = new Set(models.flatMap((m) => Object.keys(m.nodes)));
    for (const type of TYPES) expect(nodeIds.has(type)).toBe(false);
  });

  test('refuses the app without hello_task, the line naming the task type', async () => {
    const withoutHello = defineApp({
      ...camunda8,
      steps: (ctx) => Object.fromEntries(Object.entries(camunda8.steps(ctx)).filter(([type]) => type !== 'hello_task')),
    });
    await expect(
      loadAppEngine({ app: withoutHello, folder: APP_DIR }, MODELS, stepIdsOf(withoutHello), null),
    ).rejects.toThrow(
      `${APP}/index.ts: task hello_process/Activity_0apsury has zeebe:taskDefinition type hello_task but steps has no handler hello_task: add one`,
    );
  });
});

describe('end to end through the app', () => {
  test('Client-DeployWorkflow.bpmn: demo-service, Message_In through Pub/Sub, the receiver and the relay, process-message, COMPLETED', async () => {
    // The gateway's PT5S timer must not win the race on a busy machine: its queue holds it (paused, as Cloud
    // Tasks pauses a queue), so the message branch is the one under test whatever the load.
    const admin = emulatorClient(stack.tasks.host);
    await admin.pauseQueue({ name: stack.timersQueueName });
    await admin.close();
    const uniqueId = `u-${Date.now().toString(36)}`;
    const id = await started('test-process', `deploy-${uniqueId}`, { uniqueId });
    // demo-service runs through the Cloud Tasks emulator and runJob; then the token waits at the event-based gateway.
    await waitFor('the wait for Message_In', async () =>
      (await waitingPointsOf(db, id, uniqueId)).some((w) => w.messageName === 'Message_In') ? true : undefined,
    );
    expect(await doneTypes(id)).toEqual(['demo-service']);

    const messageId = await stack.pubsub
      .topic(IN_TOPIC)
      .publishMessage({ json: { uniqueId }, attributes: { eventType: 'Message_In' } });
    const doc = db.collection(INBOX).doc(messageDocId('Message_In', uniqueId, `Message_In:${uniqueId}`));
    await waitFor('Message_In in the inbox, DONE', async () => {
      const snap = await doc.get();
      if (!snap.exists) return undefined;
      if (snap.get('status') === 'OPEN') await relay();
      return (await doc.get()).get('status') === 'DONE' ? true : undefined;
    });
    expect((await doc.get()).get('source.messageId')).toBe(messageId);

    const done = await ended(id);
    expect(done.status).toBe('COMPLETED');
    expect(done.variables).toEqual({ uniqueId });
    // The message branch, not the timer's.
    expect(await doneTypes(id)).toEqual(['demo-service', 'process-message']);
  });

  test('say_hello.bpmn: hello_task sees name, only message comes back, COMPLETED with { name, message }', async () => {
    const id = await started('hello_process', 'hello-world', { name: 'World' });
    const done = await ended(id);
    expect(done.status).toBe('COMPLETED');
    expect(done.variables).toEqual({ name: 'World', message: 'Hello World' });
    expect(await doneTypes(id)).toEqual(['hello_task']);
  });

  test('looping-servicetask.bpmn with totalLoops 3: the test job runs 3 times, COMPLETED with loopAmount 3', async () => {
    const id = await started('looping-servicetask', 'loop-3', { totalLoops: 3 });
    const done = await ended(id);
    expect(done.status).toBe('COMPLETED');
    expect(done.variables).toEqual({ totalLoops: 3, loopAmount: 3 });
    expect(await doneTypes(id)).toEqual(['test', 'test', 'test']);
  });
});
