import type { Firestore } from '@google-cloud/firestore';
import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { type Message, PubSub, type Subscription } from '@google-cloud/pubsub';
import { emulatorClient, startCloudTasksEmulator, type CloudTasksEmulator } from '@inbox/cloud-tasks-emulator';
import type { Server } from 'node:http';
import { loadConfig } from '../../functions/src/config';
import type { Engine } from '../../functions/src/engine/engine';
import { type AsyncHandler, workOrderHandlers } from '../../functions/src/jobs/handlers';
import { createRunJobHandler, type RunJobDeps } from '../../functions/src/jobs/run-job';
import { createLogger } from '../../functions/src/log';
import { createStartProcessHandler } from '../../functions/src/process/start-process';
import { cloudTasksQueue, type JobQueue } from '../../functions/src/tasks/job-queue';
import { workOrderEngine } from './engine';

let registered = 0;

/**
 * startProcess and runJob served in process on real loopback ports, the
 * local Cloud Tasks emulator dispatching to runJob through the production
 * queue adapter, and handlers publishing to the Pub/Sub emulator.
 */
export interface ProcessStack {
  readonly engine: Engine;
  readonly tasks: CloudTasksEmulator;
  readonly queue: JobQueue;
  readonly startServer: Server;
  /** Where runJob listens (what the queue's tasks POST to). */
  readonly runJobUrl: string;
  readonly handlers: Readonly<Record<string, AsyncHandler>>;
  readonly logs: Array<Record<string, unknown>>;
  readonly pubsub: PubSub;
  stop(): Promise<void>;
}

export interface ProcessStackOptions {
  readonly providerTopic: string;
  /** runJob's INBOX_JOB_MAX_ATTEMPTS (default 3). */
  readonly maxAttempts?: number;
  /** The jobs queue's retryConfig.maxAttempts, also told to runJob (default 10). */
  readonly queueMaxAttempts?: number;
  /** Replace runJob's adapters, e.g. an engine loader that fails (a failure outside the handler). */
  readonly runJob?: Partial<Pick<RunJobDeps, 'engine' | 'handlers'>>;
}

export async function startProcessStack(db: Firestore, projectId: string, options: ProcessStackOptions): Promise<ProcessStack> {
  const engine = await workOrderEngine();
  const tasks = await startCloudTasksEmulator();
  const logs: Array<Record<string, unknown>> = [];
  const log = createLogger((line) => logs.push(JSON.parse(line) as Record<string, unknown>));
  const pubsub = new PubSub({ projectId });
  const handlers = workOrderHandlers({
    db: () => db,
    providerTopic: options.providerTopic,
    publish: (topic, data, attributes) => pubsub.topic(topic).publishMessage({ data, attributes: { ...attributes } }),
  });

  // runJob first: its URL goes into the queue's tasks, and runJob needs the queue (set below).
  const late: { queue?: JobQueue } = {};
  const queueOf = (): JobQueue => {
    if (late.queue === undefined) throw new Error('queue not ready');
    return late.queue;
  };
  const queueMaxAttempts = options.queueMaxAttempts ?? 10;
  const runJobName = `runJobUnderTest${++registered}`;
  http(
    runJobName,
    createRunJobHandler({
      db: () => db,
      engine: async () => engine,
      queue: queueOf,
      handlers: () => handlers,
      verifier: null,
      log,
      now: () => new Date(),
      maxAttempts: options.maxAttempts ?? 3,
      queueMaxAttempts,
      ...options.runJob,
    }),
  );
  const runJobServer = getTestServer(runJobName);
  await new Promise<void>((resolve) => runJobServer.listen(0, '127.0.0.1', resolve));
  const address = runJobServer.address();
  if (address === null || typeof address === 'string') throw new Error('runJob has no address');
  const runJobUrl = `http://127.0.0.1:${address.port}/`;

  const config = loadConfig({ GOOGLE_CLOUD_PROJECT: projectId, INBOX_PUSH_AUTH: 'disabled', INBOX_RUN_JOB_URL: runJobUrl, INBOX_TASKS_EMULATOR_HOST: tasks.host });
  const admin = emulatorClient(tasks.host);
  await admin.createQueue({
    parent: `projects/${projectId}/locations/${config.tasks.location}`,
    queue: {
      name: `projects/${projectId}/locations/${config.tasks.location}/queues/${config.tasks.queue}`,
      retryConfig: { maxAttempts: queueMaxAttempts, minBackoff: { nanos: 50_000_000 }, maxBackoff: { seconds: 1 } },
    },
  });
  await admin.close();
  const queue = cloudTasksQueue(config, runJobUrl);
  late.queue = queue;

  const startName = `startProcessUnderTest${registered}`;
  http(startName, createStartProcessHandler({ db: () => db, engine: async () => engine, queue: queueOf, log, now: () => new Date() }));

  return {
    engine,
    tasks,
    queue,
    startServer: getTestServer(startName),
    runJobUrl,
    handlers,
    logs,
    pubsub,
    async stop() {
      await tasks.stop();
      await new Promise((resolve) => runJobServer.close(resolve));
      await pubsub.close();
    },
  };
}

/**
 * The simulated provider: creates `topic` on the stack's Pub/Sub and a pull
 * subscription that acks every hand-over after `seen` has looked at it.
 */
export async function subscribeProvider(stack: ProcessStack, topic: string, seen: (m: Message) => void = () => undefined): Promise<Subscription> {
  await stack.pubsub.createTopic(topic);
  const [provider] = await stack.pubsub.topic(topic).createSubscription('provider');
  provider.on('error', () => undefined);
  provider.on('message', (m: Message) => {
    seen(m);
    m.ack();
  });
  return provider;
}
