/**
 * The work-order example's peers on the local stack (tools/local/peers.ts):
 * a simulated provider that pulls the hand-overs from `work-orders` and
 * answers each with a WorkOrderCompleted after a delay (local/provider.ts).
 * Options (`npm start -- --peer delayMs=2000`): `delayMs` (default 500) and
 * `earlyRatio` (0..1, default 0.1: answered at once, often before the
 * process waits). Never deployed.
 */
import type { StartPeers } from '../../tools/local/peers';
import { topicOf } from '../../tools/local/peers';
import { startProvider } from './local/provider';
import { PROVIDER_TOPIC } from './steps';

/** The provider's pull subscription on the topic the hand-overs go to. */
export const PROVIDER_SUBSCRIPTION = 'work-orders-provider';

const numberOption = (
  options: Readonly<Record<string, unknown>>,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number => {
  const value = options[name];
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < min || n > max)
    throw new RangeError(`the provider's ${name}: a number from ${min} to ${max}, not ${JSON.stringify(value)}`);
  return n;
};

const startPeers: StartPeers = async ({ pubsub, topology, storage, senderBucket, startProcessUrl, options }) => {
  const delayMs = numberOption(options, 'delayMs', 500, 0, 600_000);
  const [exists] = await pubsub.subscription(PROVIDER_SUBSCRIPTION).exists();
  if (exists) await pubsub.subscription(PROVIDER_SUBSCRIPTION).delete();
  await pubsub.topic(PROVIDER_TOPIC).createSubscription(PROVIDER_SUBSCRIPTION, { ackDeadlineSeconds: 30 });
  const provider = startProvider(pubsub, PROVIDER_SUBSCRIPTION, topicOf(topology, 'WorkOrderCompleted'), {
    delayMs,
    earlyRatio: numberOption(options, 'earlyRatio', 0.1, 0, 1),
    reports: { storage, bucket: senderBucket },
  });
  return {
    describe: [
      `Simulated provider: answers each hand-over on ${PROVIDER_TOPIC} with a WorkOrderCompleted after ${delayMs} ms (--peer delayMs=…, --peer earlyRatio=…).`,
      'Start a work order:',
      `  curl -s -X POST ${startProcessUrl} -H 'content-type: application/json' -d '{"processKey":"work-order-execution","businessKey":"WO-1","variables":{"workOrderId":"WO-1"}}'`,
    ],
    stats: () => ({ ...provider.stats() }),
    stop: () => provider.stop(),
  };
};

export default startPeers;
