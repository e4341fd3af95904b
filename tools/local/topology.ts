import type { PubSub } from '@google-cloud/pubsub';
import type { AppTopology } from '../../functions/src/apps/topology';

/**
 * Delivery attempts before Pub/Sub dead-letters a message (5 is the least it
 * allows). With the backoff below the Pub/Sub emulator makes the five
 * attempts in about 20 s (measured; it backs off more than the policy says
 * once pushes fail, and a longer maximum stretched five attempts past 90 s):
 * a Firestore outage of a few seconds is ridden out by redelivery, a receiver
 * cut off for longer is dead-lettered.
 */
export const MAX_DELIVERY_ATTEMPTS = 5;
export const RETRY_POLICY = { minimumBackoff: { seconds: 0 }, maximumBackoff: { seconds: 1 } };

export interface TopologyEndpoints {
  readonly receiverUrl: string;
  readonly deadLetterUrl: string;
}

/**
 * Creates the app's topology on the Pub/Sub emulator, as infra/deploy.sh
 * creates it in a project: each inbound topic with its push subscription to
 * the receiver and a dead-letter policy, the dead-letter topic pushed to
 * receiveDeadLetter, and the topics the app publishes to (their readers are
 * the app's peers, tools/local/peers.ts). Subscriptions left by an earlier
 * run are replaced, since their push endpoints point at ports that are gone.
 */
export async function createTopology(
  pubsub: PubSub,
  topology: AppTopology,
  endpoints: TopologyEndpoints,
): Promise<void> {
  const topic = async (name: string): Promise<string> => {
    const [exists] = await pubsub.topic(name).exists();
    if (!exists) await pubsub.createTopic(name);
    return pubsub.topic(name).name;
  };
  const fresh = async (name: string): Promise<void> => {
    const [exists] = await pubsub.subscription(name).exists();
    if (exists) await pubsub.subscription(name).delete();
  };
  const deadLetter = await topic(topology.deadLetter.topic);
  await fresh(topology.deadLetter.subscription);
  await pubsub.topic(deadLetter).createSubscription(topology.deadLetter.subscription, {
    pushConfig: { pushEndpoint: endpoints.deadLetterUrl },
    retryPolicy: RETRY_POLICY,
    ackDeadlineSeconds: 10,
  });
  for (const inbound of topology.inbound) {
    const source = await topic(inbound.topic);
    await fresh(inbound.subscription);
    await pubsub.topic(source).createSubscription(inbound.subscription, {
      pushConfig: { pushEndpoint: endpoints.receiverUrl },
      deadLetterPolicy: { deadLetterTopic: deadLetter, maxDeliveryAttempts: MAX_DELIVERY_ATTEMPTS },
      retryPolicy: RETRY_POLICY,
      ackDeadlineSeconds: 10,
    });
  }
  for (const name of topology.publishes) await topic(name);
}
