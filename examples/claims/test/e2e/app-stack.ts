/**
 * The deployed functions of an app, built from INBOX_APP exactly as
 * functions/src/index.ts builds them (wiring.ts, runtime.ts), served in
 * this process on loopback ports, with the app's topology on the Pub/Sub
 * emulator (as the deploy creates it from `inbox --json app`) and the
 * local Cloud Tasks emulator running the jobs, timers and fast-path relay
 * tasks. The peers of the app (who reads what its steps publish) are pull
 * subscriptions that keep every message.
 */
import type { Server } from 'node:http';
import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { type Message, PubSub, type Subscription } from '@google-cloud/pubsub';
import { emulatorClient, startCloudTasksEmulator } from '@inbox/cloud-tasks-emulator';
import { topologyOf } from '../../../../functions/src/apps/topology';
import { type Config, loadConfig } from '../../../../functions/src/config';
import { createLogger } from '../../../../functions/src/log';
import { operationsDepsOf } from '../../../../functions/src/operations/deps';
import type { OperationsDeps } from '../../../../functions/src/operations/types';
import { createRuntime } from '../../../../functions/src/runtime';
import {
  fireTimerFunction,
  type HttpFunction,
  receiveDeadLetterFunction,
  receivePubSubPushFunction,
  relayInboxFunction,
  runJobFunction,
} from '../../../../functions/src/wiring';

/** What a peer of the app received: the topic, the attributes and the JSON data. */
export interface PeerMessage {
  readonly topic: string;
  readonly attributes: Readonly<Record<string, string>>;
  readonly data: unknown;
}

/** One structured log line a function wrote. */
export type LogLine = Readonly<Record<string, unknown>>;

export interface AppStack {
  readonly config: Config;
  /** The operator's reads (`inbox instances`, `inbox waiting`, the console) on this stack's data. */
  readonly ops: OperationsDeps;
  /** Publishes a message of type `name` on `topic`, as a sender does. */
  publish(topic: string, name: string, payload: unknown): Promise<void>;
  /** Everything the app's steps published, in arrival order. */
  readonly peers: readonly PeerMessage[];
  /** The functions' log lines (they write JSON lines to stdout; kept here instead). */
  readonly logs: readonly LogLine[];
  stop(): Promise<void>;
}

let served = 0;

/** A function served on a loopback port, its handler set once the configuration (which needs every URL) exists. */
async function serve(name: string): Promise<{ url: string; server: Server; bind: (fn: HttpFunction) => void }> {
  let handler: HttpFunction | null = null;
  const unique = `${name}Claims${++served}`;
  http(unique, async (req, res) => {
    if (handler === null) throw new Error(`${name} is not bound yet`);
    await handler(req, res);
  });
  const server = getTestServer(unique);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error(`${name} has no address`);
  return { url: `http://127.0.0.1:${address.port}/`, server, bind: (fn) => (handler = fn) };
}

/** Keeps the functions' JSON log lines instead of printing them; returns the lines and the undo. */
function captureLogs(): { lines: LogLine[]; restore: () => void } {
  const lines: LogLine[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = (chunk: string | Uint8Array, ...rest: never[]): boolean => {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    if (!text.startsWith('{"severity"')) return write(chunk, ...rest);
    for (const line of text.split('\n').filter((l) => l !== '')) lines.push(JSON.parse(line) as LogLine);
    return true;
  };
  return { lines, restore: () => (process.stdout.write = write) };
}

/** Retries fast, so a failed delivery heals within a test's patience. */
const RETRY_POLICY = { minimumBackoff: { seconds: 0 }, maximumBackoff: { seconds: 1 } };
const QUEUE_RETRY = { maxAttempts: 20, minBackoff: { nanos: 100_000_000 }, maxBackoff: { seconds: 1 } };

/** Starts the app `app` (a folder relative to the repository root) in project `projectId` of the emulators. */
export async function startAppStack(app: string, projectId: string): Promise<AppStack> {
  const logs = captureLogs();
  const tasks = await startCloudTasksEmulator();
  const [receiver, deadLetters, relay, runJob, fireTimer] = await Promise.all(
    ['receivePubSubPush', 'receiveDeadLetter', 'relayInbox', 'runJob', 'fireTimer'].map(serve),
  );
  if (
    receiver === undefined ||
    deadLetters === undefined ||
    relay === undefined ||
    runJob === undefined ||
    fireTimer === undefined
  )
    throw new Error('not every function is served');
  const config = loadConfig({
    GOOGLE_CLOUD_PROJECT: projectId,
    INBOX_APP: app,
    INBOX_PUSH_AUTH: 'disabled',
    INBOX_RUN_JOB_URL: runJob.url,
    INBOX_FIRE_TIMER_URL: fireTimer.url,
    INBOX_RELAY_URL: relay.url,
    INBOX_TASKS_EMULATOR_HOST: tasks.host,
  });
  const runtime = createRuntime(config);
  receiver.bind(receivePubSubPushFunction(config, runtime));
  deadLetters.bind(receiveDeadLetterFunction(config, runtime));
  relay.bind(relayInboxFunction(config, runtime));
  runJob.bind(runJobFunction(config, runtime));
  fireTimer.bind(fireTimerFunction(config, runtime));

  const location = `projects/${projectId}/locations/${config.tasks.location}`;
  const admin = emulatorClient(tasks.host);
  for (const queue of [config.tasks.queue, config.tasks.timersQueue, config.relay.queue]) {
    await admin.createQueue({
      parent: location,
      queue: { name: `${location}/queues/${queue}`, retryConfig: QUEUE_RETRY },
    });
  }
  await admin.close();

  // The topology the deploy creates, from the app's declaration.
  const pubsub = new PubSub({ projectId });
  const topology = topologyOf(runtime.app());
  const [deadLetterTopic] = await pubsub.createTopic(topology.deadLetter.topic);
  await deadLetterTopic.createSubscription(topology.deadLetter.subscription, {
    pushConfig: { pushEndpoint: deadLetters.url },
    retryPolicy: RETRY_POLICY,
    ackDeadlineSeconds: 10,
  });
  for (const inbound of topology.inbound) {
    const [topic] = await pubsub.createTopic(inbound.topic);
    await topic.createSubscription(inbound.subscription, {
      pushConfig: { pushEndpoint: receiver.url },
      deadLetterPolicy: { deadLetterTopic: deadLetterTopic.name, maxDeliveryAttempts: 5 },
      retryPolicy: RETRY_POLICY,
      ackDeadlineSeconds: 10,
    });
  }
  const peers: PeerMessage[] = [];
  const subscriptions: Subscription[] = [];
  for (const name of topology.publishes) {
    const [topic] = await pubsub.createTopic(name);
    const [subscription] = await topic.createSubscription(`${name}-peer`);
    subscription.on('error', () => undefined);
    subscription.on('message', (m: Message) => {
      peers.push({
        topic: name,
        attributes: { ...m.attributes },
        data: JSON.parse(m.data.toString('utf8')) as unknown,
      });
      m.ack();
    });
    subscriptions.push(subscription);
  }

  const ops = operationsDepsOf(
    config,
    runtime,
    createLogger(() => undefined),
  );
  return {
    config,
    ops,
    publish: async (topic, name, payload) => {
      await pubsub
        .topic(topic)
        .publishMessage({ data: Buffer.from(JSON.stringify(payload)), attributes: { eventType: name } });
    },
    peers,
    logs: logs.lines,
    async stop() {
      try {
        await Promise.all(subscriptions.map((s) => s.close()));
        await pubsub.close();
        await tasks.stop();
        await Promise.all(
          [receiver, deadLetters, relay, runJob, fireTimer].map(
            ({ server }) => new Promise((resolve) => server.close(resolve)),
          ),
        );
        await runtime.db().terminate();
      } finally {
        logs.restore();
      }
    },
  };
}
