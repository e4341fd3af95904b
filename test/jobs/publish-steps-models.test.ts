import type { Message, Subscription } from '@google-cloud/pubsub';
import { join } from 'node:path';
import { loadConfig } from '../../functions/src/config';
import { refs } from '../../functions/src/engine/store/collections';
import { MESSAGE_ID_ATTRIBUTE } from '../../functions/src/jobs/publish-steps';
import { createRuntime } from '../../functions/src/runtime';
import twoPublishers, { ORDERS_TOPIC, REFUNDS_TOPIC } from '../fixtures/apps/two-publishers';
import { REPO_ROOT } from '../support/app';
import { freshFirestores } from '../support/firestore';
import { startOverHttp } from '../support/pipeline';
import { startProcessStack, type ProcessStack } from '../support/process-stack';
import { waitFor } from '../support/wait';

/**
 * Two models whose publishing elements share their ids (refunds.bpmn is a
 * copy of orders.bpmn: `Activity_1`, `EndEvent_1`) and publish different
 * messages to different topics (test/fixtures/apps/two-publishers), through
 * the job path a deployment runs: startProcess, the Cloud Tasks emulator,
 * runJob with the runtime's handlers and engine (functions/src/runtime.ts,
 * INBOX_APP naming the app), publishing to the Pub/Sub emulator. Each
 * instance must publish its own messages, to its own topic, with its own
 * variables; orders' `Activity_1` is a multi-instance send task, whose items
 * run under the process key `fixture-orders#Activity_1`.
 */
const APP = 'test/fixtures/apps/two-publishers';
const fresh = freshFirestores();
const { db, projectId } = fresh.project('publish-steps-models');
let stack: ProcessStack;
const subscriptions: Subscription[] = [];

interface Received {
  readonly topic: string;
  readonly name: string | undefined;
  readonly body: Record<string, unknown>;
}
/** Every message received on the two topics, by its inboxMessageId (a publish retried is one message). */
const received = new Map<string, Received>();

beforeAll(async () => {
  const config = loadConfig({ INBOX_APP: APP, GOOGLE_CLOUD_PROJECT: projectId, INBOX_PUSH_AUTH: 'disabled' });
  const runtime = createRuntime(config);
  stack = await startProcessStack(db, projectId, {
    app: { app: twoPublishers, folder: join(REPO_ROOT, APP) },
    // What runJob runs in a deployment: the runtime's handlers (the app's steps and the system's publishing steps).
    runJob: { handlers: runtime.handlers, engine: runtime.engine },
  });
  for (const topic of [ORDERS_TOPIC, REFUNDS_TOPIC]) {
    const [sub] = await stack.pubsub.topic(topic).createSubscription(`${topic}-pull`);
    sub.on('error', () => undefined);
    sub.on('message', (m: Message) => {
      m.ack();
      const body = JSON.parse(m.data.toString('utf8')) as Record<string, unknown>;
      received.set(m.attributes[MESSAGE_ID_ATTRIBUTE] ?? m.id, { topic, name: m.attributes.eventType, body });
    });
    subscriptions.push(sub);
  }
});
fresh.beforeTerminate(async () => {
  for (const sub of subscriptions) await sub.close();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await stack?.stop();
});

/** Waits until the instance has ended, then expects it COMPLETED (an incident, e.g. NO_HANDLER, shows in the diff). */
async function completed(id: string): Promise<void> {
  const ended = await waitFor(`instance ${id} to end`, async () => {
    const snap = await refs.instance(db, id).get();
    return snap.get('status') === 'RUNNING'
      ? undefined
      : { status: snap.get('status') as unknown, incidents: snap.get('incidents') as unknown };
  });
  expect(ended).toEqual({ status: 'COMPLETED', incidents: [] });
}

test('two models with the same element ids: each instance publishes its own messages to its own topic', async () => {
  const orders = await startOverHttp(stack, 'fixture-orders', 'O-1', { orderId: 'O-1', items: ['a', 'b'] });
  const refunds = await startOverHttp(stack, 'fixture-refunds', 'R-1', { refundId: 'R-1', amount: 7 });
  await completed(orders);
  await completed(refunds);
  // Five publishing jobs ran (two items, an end event; a send task, an end event), each publishing once before it finished.
  await waitFor('five messages on the two topics', async () => (received.size >= 5 ? true : undefined));

  const seen = [...received.values()]
    .map(({ topic, name, body }) => {
      const { [MESSAGE_ID_ATTRIBUTE]: id, ...variables } = body;
      expect(id).toMatch(/^[0-9a-f]{40}$/);
      return { topic, name, variables };
    })
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  const expected = [
    {
      topic: ORDERS_TOPIC,
      name: 'ItemPacked',
      variables: { orderId: 'O-1', items: ['a', 'b'], item: 'a', loopCounter: 1 },
    },
    {
      topic: ORDERS_TOPIC,
      name: 'ItemPacked',
      variables: { orderId: 'O-1', items: ['a', 'b'], item: 'b', loopCounter: 2 },
    },
    { topic: ORDERS_TOPIC, name: 'OrderShipped', variables: { orderId: 'O-1', items: ['a', 'b'] } },
    { topic: REFUNDS_TOPIC, name: 'RefundRequested', variables: { refundId: 'R-1', amount: 7 } },
    { topic: REFUNDS_TOPIC, name: 'RefundIssued', variables: { refundId: 'R-1', amount: 7 } },
  ].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  expect(seen).toEqual(expected);
});
