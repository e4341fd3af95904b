import type { PushEnvelope } from '../inbox/draft';

/**
 * Pub/Sub wraps a dead-lettered message: same data, the original attributes
 * plus CloudPubSubDeadLetterSource* attributes describing where it came from.
 */
export const DEAD_LETTER_ATTRIBUTE_PREFIX = 'CloudPubSubDeadLetterSource';

export interface DeadLetterSource {
  /** Full name of the subscription that gave up (…SourceSubscription). */
  readonly subscription: string | null;
  /** Delivery attempts made there (…SourceDeliveryCount). */
  readonly deliveryCount: number | null;
  /** Every CloudPubSubDeadLetterSource* attribute, as received. */
  readonly attributes: Readonly<Record<string, string>>;
}

/**
 * Splits a dead-letter envelope into the original message (as the source
 * subscription delivered it) and where it was dead-lettered from. Pure.
 */
export function unwrapDeadLetter(envelope: PushEnvelope): { original: PushEnvelope; source: DeadLetterSource } {
  const originalAttributes = Object.create(null) as Record<string, string>;
  const sourceAttributes = Object.create(null) as Record<string, string>;
  for (const [key, value] of Object.entries(envelope.attributes)) {
    if (key.startsWith(DEAD_LETTER_ATTRIBUTE_PREFIX)) sourceAttributes[key] = value;
    else originalAttributes[key] = value;
  }
  const subscription = sourceAttributes[`${DEAD_LETTER_ATTRIBUTE_PREFIX}Subscription`] ?? null;
  const count = Number(sourceAttributes[`${DEAD_LETTER_ATTRIBUTE_PREFIX}DeliveryCount`]);
  // Pub/Sub sends the bare subscription id here, with the project in another attribute.
  const project = sourceAttributes[`${DEAD_LETTER_ATTRIBUTE_PREFIX}SubscriptionProject`];
  const fullSubscription =
    subscription === null || subscription.startsWith('projects/') || project === undefined
      ? subscription
      : `projects/${project}/subscriptions/${subscription}`;
  return {
    original: { ...envelope, attributes: originalAttributes, subscription: fullSubscription ?? envelope.subscription },
    source: {
      subscription: fullSubscription,
      deliveryCount: Number.isFinite(count) ? count : null,
      attributes: sourceAttributes,
    },
  };
}
