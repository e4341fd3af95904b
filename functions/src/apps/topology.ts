/**
 * What an app needs of Pub/Sub and Firestore, derived from its declaration
 * alone: the topics its messages arrive on, each with its push subscription
 * to receivePubSubPush; the dead-letter topic and its push subscription to
 * receiveDeadLetter; the topics its steps publish to; the collections they
 * write. `inbox app --json` prints it; infra/deploy.sh, the local stack and
 * the demo create exactly this. Pure.
 */
import type { App } from '../app';
import { AppDefinitionError } from './check-definition';

/** One topic messages arrive on, with its push subscription and the message types it carries. */
export interface InboundTopic {
  readonly topic: string;
  readonly subscription: string;
  readonly messages: readonly string[];
}

export interface AppTopology {
  readonly app: string;
  readonly inbound: readonly InboundTopic[];
  readonly deadLetter: { readonly topic: string; readonly subscription: string };
  readonly publishes: readonly string[];
  readonly collections: readonly string[];
}

/** The app's topology; refuses (AppDefinitionError) two subscription names for one topic, or one name used twice. */
export function topologyOf(app: App): AppTopology {
  const byTopic = new Map<string, { subscription: string; messages: string[] }>();
  for (const m of app.messages) {
    const seen = byTopic.get(m.topic);
    if (seen === undefined) byTopic.set(m.topic, { subscription: m.subscription, messages: [m.name] });
    else if (seen.subscription !== m.subscription)
      throw new AppDefinitionError(
        `messages ${seen.messages[0] ?? ''} and ${m.name} share the topic ${m.topic} but name two subscriptions (${seen.subscription}, ${m.subscription}): one topic has one push subscription`,
      );
    else seen.messages.push(m.name);
  }
  const inbound = [...byTopic].map(([topic, v]) => ({ topic, subscription: v.subscription, messages: v.messages }));
  const deadLetter = { topic: app.deadLetterTopic, subscription: `${app.deadLetterTopic}-push` };
  if (byTopic.has(deadLetter.topic))
    throw new AppDefinitionError(
      `the dead-letter topic ${deadLetter.topic} is also a topic messages arrive on: give it a name of its own (deadLetterTopic)`,
    );
  const subscriptions = [...inbound.map((t) => t.subscription), deadLetter.subscription];
  const twice = subscriptions.find((s, i) => subscriptions.indexOf(s) !== i);
  if (twice !== undefined)
    throw new AppDefinitionError(
      `the subscription ${twice} is named twice: each inbound topic and the dead-letter topic need their own`,
    );
  return { app: app.name, inbound, deadLetter, publishes: [...app.publishes], collections: [...app.collections] };
}
