import type { PubSub } from '@google-cloud/pubsub';

/** Names of the local stack's topics and subscriptions (what infra/ creates in a project). */
export const TOPOLOGY = {
  completions: 'work-order-completed',
  completionsPush: 'work-order-completed-push',
  releases: 'work-order-released',
  releasesPush: 'work-order-released-push',
  deadLetter: 'work-order-completed-dlt',
  deadLetterPush: 'work-order-completed-dlt-push',
  providerPull: 'work-orders-provider',
} as const;

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
  readonly providerTopic: string;
}

/**
 * Creates the topics and subscriptions on the Pub/Sub emulator: completions
 * and releases pushed to the receiver alike, with a dead-letter policy, the
 * dead-letter topic pushed to receiveDeadLetter, and a pull subscription on
 * the provider topic for the simulated provider. Subscriptions left by an earlier run are
 * replaced, since their push endpoints point at ports that are gone.
 */
export async function createTopology(pubsub: PubSub, endpoints: TopologyEndpoints): Promise<void> {
  const topic = async (name: string): Promise<string> => {
    const [exists] = await pubsub.topic(name).exists();
    if (!exists) await pubsub.createTopic(name);
    return pubsub.topic(name).name;
  };
  const fresh = async (name: string): Promise<void> => {
    const [exists] = await pubsub.subscription(name).exists();
    if (exists) await pubsub.subscription(name).delete();
  };
  const completions = await topic(TOPOLOGY.completions);
  const releases = await topic(TOPOLOGY.releases);
  const deadLetter = await topic(TOPOLOGY.deadLetter);
  const provider = await topic(endpoints.providerTopic);
  for (const name of [TOPOLOGY.completionsPush, TOPOLOGY.releasesPush, TOPOLOGY.deadLetterPush, TOPOLOGY.providerPull]) await fresh(name);
  await pubsub.topic(deadLetter).createSubscription(TOPOLOGY.deadLetterPush, { pushConfig: { pushEndpoint: endpoints.deadLetterUrl }, retryPolicy: RETRY_POLICY, ackDeadlineSeconds: 10 });
  for (const [source, name] of [[completions, TOPOLOGY.completionsPush], [releases, TOPOLOGY.releasesPush]] as const) {
    await pubsub.topic(source).createSubscription(name, {
      pushConfig: { pushEndpoint: endpoints.receiverUrl },
      deadLetterPolicy: { deadLetterTopic: deadLetter, maxDeliveryAttempts: MAX_DELIVERY_ATTEMPTS },
      retryPolicy: RETRY_POLICY,
      ackDeadlineSeconds: 10,
    });
  }
  await pubsub.topic(provider).createSubscription(TOPOLOGY.providerPull, { ackDeadlineSeconds: 30 });
}
