import type { Message, Subscription } from '@google-cloud/pubsub';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../functions/src/config';
import { emulatorClient } from '@inbox/cloud-tasks-emulator';
import { refs } from '../../functions/src/engine/store/collections';
import { MESSAGE_ID_ATTRIBUTE } from '../../functions/src/jobs/publish-steps';
import { createRuntime } from '../../functions/src/runtime';
import twoPublishers, { ORDERS_TOPIC } from '../fixtures/apps/two-publishers';
import { cliFor } from '../cli/run-cli';
import { REPO_ROOT } from '../support/app';
import { jobsOf } from '../support/process-state';
import { freshFirestores } from '../support/firestore';
import { startOverHttp } from '../support/pipeline';
import { startProcessStack, type ProcessStack } from '../support/process-stack';
import { waitFor } from '../support/wait';

/**
 * A publishing element that only an older version draws still publishes
 * for that version's instances. The orders model of
 * test/fixtures/apps/two-publishers is deployed as v1; v2 renames its
 * message end event (EndEvent_1 to EndEvent_shipped, the same OrderShipped).
 * An instance started on v1 runs its jobs on a runJob that has v2 deployed
 * (the runtime's handlers, engine and per-version publishing steps, as a
 * deployment wires them): its end event's job finds v1's publishing step,
 * not NO_HANDLER, and OrderShipped reaches the orders topic once.
 */
const APP = 'test/fixtures/apps/two-publishers';
const MODELS = join(REPO_ROOT, APP, 'bpmn');
const fresh = freshFirestores();
const { db, projectId } = fresh.project('publish-steps-versions');
let stack: ProcessStack;
let subscription: Subscription;
let v2Dir: string;
const received: Array<{ name: string | undefined; id: string | undefined }> = [];

const runtimeOn = (bpmnDir: string) =>
  createRuntime(
    loadConfig({
      INBOX_APP: APP,
      INBOX_BPMN_DIR: bpmnDir,
      GOOGLE_CLOUD_PROJECT: projectId,
      INBOX_PUSH_AUTH: 'disabled',
    }),
  );

beforeAll(async () => {
  v2Dir = await mkdtemp(join(tmpdir(), 'publish-v2-'));
  const orders = await readFile(join(MODELS, 'orders.bpmn'), 'utf8');
  await writeFile(join(v2Dir, 'orders.bpmn'), orders.replaceAll('EndEvent_1', 'EndEvent_shipped'));
  await copyFile(join(MODELS, 'refunds.bpmn'), join(v2Dir, 'refunds.bpmn'));
  // v1 deployed first: its functions keep its versions when they load it.
  const v1 = runtimeOn(MODELS);
  const v1Engine = await v1.engine();
  const v2 = runtimeOn(v2Dir);
  stack = await startProcessStack(db, projectId, {
    app: { app: twoPublishers, folder: join(REPO_ROOT, APP) },
    engine: v1Engine,
    // runJob of the new deployment.
    runJob: { handlers: v2.handlers, engine: v2.engine, publishStepsOf: v2.publishStepsOf },
  });
  [subscription] = await stack.pubsub.topic(ORDERS_TOPIC).createSubscription(`${ORDERS_TOPIC}-pull`);
  subscription.on('error', () => undefined);
  subscription.on('message', (m: Message) => {
    m.ack();
    received.push({ name: m.attributes.eventType, id: m.attributes[MESSAGE_ID_ATTRIBUTE] });
  });
});
fresh.beforeTerminate(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await subscription?.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- as above
  await stack?.stop();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- as above
  if (v2Dir !== undefined) await rm(v2Dir, { recursive: true, force: true });
});

test('a v1 instance publishes at the end event v2 renamed, on a runJob with v2 deployed', async () => {
  const id = await startOverHttp(stack, 'fixture-orders', 'O-v1', { orderId: 'O-v1', items: ['a'] });
  const ended = await waitFor(`instance ${id} to end`, async () => {
    const snap = await refs.instance(db, id).get();
    return snap.get('status') === 'RUNNING'
      ? undefined
      : { status: snap.get('status') as unknown, incidents: snap.get('incidents') as unknown };
  });
  expect(ended).toEqual({ status: 'COMPLETED', incidents: [] });
  await waitFor('OrderShipped', async () => (received.some((r) => r.name === 'OrderShipped') ? true : undefined));
  const names = received.map((r) => r.name).sort();
  expect(names).toEqual(['ItemPacked', 'OrderShipped']);
  expect(new Set(received.map((r) => r.id)).size).toBe(2);
});

test('the deploy check of v2 counts a v1 job at the renamed end event as served: the app still sends its message', async () => {
  const admin = emulatorClient(stack.tasks.host);
  try {
    // No items: the token is at the end event at once, its job held in the paused queue.
    await admin.pauseQueue({ name: stack.jobsQueueName });
    const id = await startOverHttp(stack, 'fixture-orders', 'O-v1-held', { orderId: 'O-v1-held', items: [] });
    await waitFor('the end event job', async () =>
      (await jobsOf(db, id)).some((j) => j.activityId === 'EndEvent_1' && j.status === 'PENDING') ? true : undefined,
    );
    const impact = await cliFor(projectId, undefined, { INBOX_APP: APP, INBOX_BPMN_DIR: v2Dir })(
      '--json',
      'model',
      'impact',
    );
    expect(impact.err).toBe('');
    expect(impact.code).toBe(0);
    expect(impact.json()).toMatchObject({ refused: false, droppedHandlers: [], unreachedHandlers: [] });
    await admin.resumeQueue({ name: stack.jobsQueueName });
    await waitFor(`instance ${id} COMPLETED`, async () =>
      (await refs.instance(db, id).get()).get('status') === 'COMPLETED' ? true : undefined,
    );
    expect(received.filter((r) => r.name === 'OrderShipped')).toHaveLength(2);
  } finally {
    await admin.close();
  }
});
