/**
 * What an app may add to the local stack: the systems around it, simulated
 * (a counterpart that answers what the app's steps publish, e.g. a provider
 * that reports work done). A dev-only module `local.ts` beside the app's index.ts,
 * default-exporting a {@link StartPeers}; the stack starts it after the
 * topology exists and stops it with everything else. Never deployed.
 */
import type { PubSub } from '@google-cloud/pubsub';
import type { Storage } from '@google-cloud/storage';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { AppTopology } from '../../functions/src/apps/topology';

/** What the stack hands an app's peers. */
export interface PeersContext {
  readonly pubsub: PubSub;
  readonly projectId: string;
  /** The app's topics and subscriptions, as created on the Pub/Sub emulator. */
  readonly topology: AppTopology;
  /** A real Cloud Storage client on the local emulator. */
  readonly storage: Storage;
  /** The bucket senders' objects go in: the functions accept claim-check references into it (INBOX_REFERENCE_BUCKETS). */
  readonly senderBucket: string;
  /** startProcess's URL on the stack (what a peer, or the line it prints, starts a process with). */
  readonly startProcessUrl: string;
  /** What the stack's caller passed for the peers (`npm start --peer key=value`, a test's options); the app reads what it knows. */
  readonly options: Readonly<Record<string, unknown>>;
}

/** Running peers. */
export interface Peers {
  /** Lines `npm start` prints about them: what they do, how to start one of the app's processes. */
  readonly describe: readonly string[];
  /** Counters for the stack's status (JSON). */
  stats(): Readonly<Record<string, unknown>>;
  stop(): Promise<void>;
}

export type StartPeers = (context: PeersContext) => Promise<Peers>;

/** The peers of the app in `folder` (its `local.ts`), or none: an app without one runs alone. */
export function peersOf(folder: string): StartPeers | null {
  const file = join(folder, 'local.ts');
  if (!existsSync(file)) return null;
  const exported = (require(file) as { default?: unknown }).default;
  if (typeof exported !== 'function')
    throw new Error(
      `${file}: its default export must be a function (context) => Promise<Peers> (tools/local/peers.ts)`,
    );
  return exported as StartPeers;
}

/** The topic the app's message `name` arrives on in the topology; throws for a name the app does not declare. */
export function topicOf(topology: AppTopology, name: string): string {
  const found = topology.inbound.find((t) => t.messages.includes(name));
  if (found === undefined)
    throw new Error(
      `the app ${topology.app} declares no message ${name} (it has ${topology.inbound.flatMap((t) => t.messages).join(', ')})`,
    );
  return found.topic;
}

/** The push subscription message `name` arrives through, as its full name (`projects/P/subscriptions/S`): part of an invalid message's inbox id. */
export function subscriptionOf(topology: AppTopology, projectId: string, name: string): string {
  const found = topology.inbound.find((t) => t.messages.includes(name));
  if (found === undefined) throw new Error(`the app ${topology.app} declares no message ${name}`);
  return `projects/${projectId}/subscriptions/${found.subscription}`;
}
