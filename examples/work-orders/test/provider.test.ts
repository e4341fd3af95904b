import { PubSub, type Message, type Subscription } from '@google-cloud/pubsub';
import { startProvider, type SimulatedProvider } from '../local/provider';
import { waitFor } from '../../../test/support/wait';

/**
 * The simulated provider on the Pub/Sub emulator: it answers a hand-over,
 * and only a hand-over. A reminder (WorkOrderOverdue, what the overdue path
 * publishes to the same topic) is counted once per escalation job and never
 * answered: the demo's never-answered orders would be invoiced otherwise.
 */
const pubsub = new PubSub({ projectId: `provider-${Date.now().toString(36)}` });
let provider: SimulatedProvider | undefined;
let watch: Subscription | undefined;
const completions: Message[] = [];

afterAll(async () => {
  await provider?.stop();
  watch?.removeAllListeners('message');
  await watch?.close();
  await pubsub.close();
});

test('a hand-over is answered once; reminders are counted per escalation job and answered never', async () => {
  const [workOrders] = await pubsub.createTopic('work-orders');
  await workOrders.createSubscription('provider-pull');
  const [completed] = await pubsub.createTopic('work-order-completed');
  [watch] = await completed.createSubscription('watch');
  watch.on('message', (m: Message) => {
    completions.push(m);
    m.ack();
  });
  provider = startProvider(pubsub, 'provider-pull', 'work-order-completed', { delayMs: 0, earlyRatio: 1 });

  const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));
  await Promise.all([
    workOrders.publishMessage({
      data: json({ workOrderId: 'WO-1', variables: { workOrderId: 'WO-1' } }),
      attributes: { eventType: 'WorkOrderHandedOver', workOrderId: 'WO-1', jobId: 'j-hand-1' },
    }),
    // The same escalation twice (a re-run of its job), another order's escalation, a message of a type the provider does not know.
    workOrders.publishMessage({
      data: json({ workOrderId: 'WO-1', processInstanceId: 'p1', overdueSince: '2026-12-01T10:00:00Z' }),
      attributes: { eventType: 'WorkOrderOverdue', workOrderId: 'WO-1', jobId: 'j-esc-1' },
    }),
    workOrders.publishMessage({
      data: json({ workOrderId: 'WO-1', processInstanceId: 'p1', overdueSince: '2026-12-01T10:00:00Z' }),
      attributes: { eventType: 'WorkOrderOverdue', workOrderId: 'WO-1', jobId: 'j-esc-1' },
    }),
    workOrders.publishMessage({
      data: json({ workOrderId: 'WO-2', processInstanceId: 'p2', overdueSince: '2026-12-01T10:00:00Z' }),
      attributes: { eventType: 'WorkOrderOverdue', workOrderId: 'WO-2', jobId: 'j-esc-2' },
    }),
    workOrders.publishMessage({ data: json({ workOrderId: 'WO-3' }), attributes: { eventType: 'WorkOrderRenamed' } }),
  ]);

  const stats = await waitFor(
    'the provider to take all five messages',
    async () => {
      const s = provider?.stats();
      return s !== undefined && s.received >= 5 && completions.length >= 1 ? s : undefined;
    },
    { timeoutMs: 30_000, everyMs: 100 },
  );
  expect(stats).toMatchObject({
    received: 5,
    handedOver: 1,
    completionsPublished: 1,
    reminders: 2,
    remindersByWorkOrder: { 'WO-1': 1, 'WO-2': 1 },
    ignored: 1,
    failures: 0,
  });
  expect(completions.map((m) => (JSON.parse(m.data.toString('utf8')) as { workOrderId: string }).workOrderId)).toEqual([
    'WO-1',
  ]);
});
