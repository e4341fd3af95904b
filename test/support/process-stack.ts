import type { Firestore } from '@google-cloud/firestore';
import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { type Message, PubSub, type Subscription } from '@google-cloud/pubsub';
import { emulatorClient, startCloudTasksEmulator, type CloudTasksEmulator } from '@inbox/cloud-tasks-emulator';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { loadConfig } from '../../functions/src/config';
import type { Engine } from '../../functions/src/engine/engine';
import type { SettledQueues } from '../../functions/src/jobs/dispatch';
import { createFireTimerHandler } from '../../functions/src/jobs/fire-timer';
import type { App } from '../../functions/src/app';
import type { AsyncHandler } from '../../functions/src/jobs/handlers';
import { createRunJobHandler, type RunJobDeps } from '../../functions/src/jobs/run-job';
import { createLogger } from '../../functions/src/log';
import { createStartProcessHandler } from '../../functions/src/process/start-process';
import type { PayloadStore } from '../../functions/src/storage/payload-store';
import { cloudTasksQueue, type JobQueue, timerQueue } from '../../functions/src/tasks/job-queue';
import { loadAppEngine } from '../../functions/src/apps/app-engine';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import { appHandlers, FIXTURE_APP_DIR, fixtureApp, stepIdsOf } from './app';

let registered = 0;

/**
 * startProcess, runJob and fireTimer served in process on real loopback
 * ports, the local Cloud Tasks emulator dispatching to runJob and fireTimer
 * through the production queue adapters, and the app's handlers (the
 * fixture app's unless a test names another) publishing to the Pub/Sub
 * emulator.
 */
export interface ProcessStack {
  /** The app whose handlers run. */
  readonly app: App;
  /** The models the functions run now (what the last deploy loaded). */
  readonly engine: Engine;
  /**
   * A deploy of changed models: from now on startProcess, runJob, fireTimer
   * (and relayOnStack) load `engine`, as new function instances would, while
   * the queues and their tasks in flight stay as they are.
   */
  redeploy(engine: Engine): void;
  readonly tasks: CloudTasksEmulator;
  readonly queue: JobQueue;
  /** The timers queue (INBOX_TIMERS_QUEUE's default), its tasks POSTed to fireTimer at their scheduleTime. */
  readonly timerQueue: JobQueue;
  /** Both queues, as the store's callers dispatch a Settled. */
  readonly queues: SettledQueues;
  readonly startServer: Server;
  /** Where runJob listens (what the queue's tasks POST to). */
  readonly runJobUrl: string;
  /** Where fireTimer listens (what the timer tasks POST to). */
  readonly fireTimerUrl: string;
  /** Full name of the timers queue in the emulator. */
  readonly timersQueueName: string;
  /** Full name of the jobs queue in the emulator. */
  readonly jobsQueueName: string;
  readonly handlers: Readonly<Record<string, AsyncHandler>>;
  readonly logs: Array<Record<string, unknown>>;
  readonly pubsub: PubSub;
  stop(): Promise<void>;
}

/** An app as a test hands it over: its declaration and its folder (its models are `folder/app.models`). */
export interface TestApp {
  readonly app: App;
  readonly folder: string;
}

export interface ProcessStackOptions {
  /** The app whose handlers and models run (default: the fixture app, test/fixtures/app). */
  readonly app?: TestApp;
  /**
   * Create the topics the app publishes to on the stack's Pub/Sub, as
   * deploy.sh does (default true). False: they do not exist, and every
   * publish fails (on a project of its own, so no other stack made them).
   */
  readonly createTopics?: boolean;
  /** runJob's INBOX_JOB_MAX_ATTEMPTS (default 3). */
  readonly maxAttempts?: number;
  /** The jobs queue's retryConfig.maxAttempts, also told to runJob (default 10). */
  readonly queueMaxAttempts?: number;
  /** Replace runJob's adapters, e.g. an engine loader that fails (a failure outside the handler). */
  readonly runJob?: Partial<Pick<RunJobDeps, 'engine' | 'handlers' | 'publishStepsOf'>>;
  /** The models every function runs (default: the app's, checked as a function start checks them). */
  readonly engine?: Engine;
  /** The clock of startProcess, runJob and fireTimer (default: the real one). */
  readonly now?: () => Date;
  /** Cloud Storage of the handlers (a step reads a claim check's report); default: none, and a report variable fails the job's attempt. */
  readonly payloadStore?: () => PayloadStore;
}

/** Serves `handler` in process on a loopback port; its URL and server. */
async function listen(name: string, handler: Parameters<typeof http>[1]): Promise<{ url: string; server: Server }> {
  http(name, handler);
  const server = getTestServer(name);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error(`${name} has no address`);
  return { url: `http://127.0.0.1:${address.port}/`, server };
}

export async function startProcessStack(
  db: Firestore,
  projectId: string,
  options: ProcessStackOptions = {},
): Promise<ProcessStack> {
  const { app, folder } = options.app ?? { app: fixtureApp, folder: FIXTURE_APP_DIR };
  let engine =
    options.engine ??
    (await loadAppEngine({ app, folder }, join(folder, app.models), stepIdsOf(app), inboxBuffer(7 * 24 * 3_600_000)));
  const now = options.now ?? ((): Date => new Date());
  const pubsub = new PubSub({ projectId });
  if (options.createTopics ?? true) {
    for (const topic of app.publishes) {
      const [exists] = await pubsub.topic(topic).exists();
      if (!exists) await pubsub.createTopic(topic);
    }
  }
  const tasks = await startCloudTasksEmulator();
  const logs: Array<Record<string, unknown>> = [];
  const log = createLogger((line) => logs.push(JSON.parse(line) as Record<string, unknown>));
  const handlers = appHandlers(app, {
    db: () => db,
    pubsub: () => pubsub,
    ...(options.payloadStore === undefined ? {} : { payloadStore: options.payloadStore }),
  });

  // The task targets first: their URLs go into the queues' tasks, and they need the queues (set below).
  const late: { queues?: SettledQueues } = {};
  const queuesOf = (): SettledQueues => {
    if (late.queues === undefined) throw new Error('queues not ready');
    return late.queues;
  };
  const queueMaxAttempts = options.queueMaxAttempts ?? 10;
  const n = ++registered;
  const runJob = await listen(
    `runJobUnderTest${n}`,
    createRunJobHandler({
      db: () => db,
      engine: async () => engine,
      queue: () => queuesOf().jobs,
      timerQueue: () => queuesOf().timers,
      handlers: () => handlers,
      verifier: null,
      log,
      now,
      maxAttempts: options.maxAttempts ?? 3,
      queueMaxAttempts,
      ...options.runJob,
    }),
  );
  const fireTimer = await listen(
    `fireTimerUnderTest${n}`,
    createFireTimerHandler({
      db: () => db,
      engine: async () => engine,
      queue: () => queuesOf().jobs,
      timerQueue: () => queuesOf().timers,
      verifier: null,
      log,
      now,
    }),
  );

  const config = loadConfig({
    GOOGLE_CLOUD_PROJECT: projectId,
    INBOX_PUSH_AUTH: 'disabled',
    INBOX_RUN_JOB_URL: runJob.url,
    INBOX_FIRE_TIMER_URL: fireTimer.url,
    INBOX_TASKS_EMULATOR_HOST: tasks.host,
  });
  const location = `projects/${projectId}/locations/${config.tasks.location}`;
  const retryConfig = { maxAttempts: queueMaxAttempts, minBackoff: { nanos: 50_000_000 }, maxBackoff: { seconds: 1 } };
  const timersQueueName = `${location}/queues/${config.tasks.timersQueue}`;
  const admin = emulatorClient(tasks.host);
  await admin.createQueue({
    parent: location,
    queue: { name: `${location}/queues/${config.tasks.queue}`, retryConfig },
  });
  await admin.createQueue({ parent: location, queue: { name: timersQueueName, retryConfig } });
  await admin.close();
  const queues: SettledQueues = {
    jobs: cloudTasksQueue(config, runJob.url),
    timers: timerQueue(config, fireTimer.url),
  };
  late.queues = queues;

  const startName = `startProcessUnderTest${n}`;
  http(
    startName,
    createStartProcessHandler({
      db: () => db,
      engine: async () => engine,
      queue: () => queues.jobs,
      timerQueue: () => queues.timers,
      log,
      now,
    }),
  );

  return {
    app,
    get engine() {
      return engine;
    },
    redeploy(next: Engine) {
      engine = next;
    },
    tasks,
    queue: queues.jobs,
    timerQueue: queues.timers,
    queues,
    startServer: getTestServer(startName),
    runJobUrl: runJob.url,
    fireTimerUrl: fireTimer.url,
    timersQueueName,
    jobsQueueName: `${location}/queues/${config.tasks.queue}`,
    handlers,
    logs,
    pubsub,
    async stop() {
      await tasks.stop();
      await new Promise((resolve) => runJob.server.close(resolve));
      await new Promise((resolve) => fireTimer.server.close(resolve));
      await pubsub.close();
    },
  };
}

/**
 * The app's counterpart, simulated: a pull subscription `counterpart` on the
 * topic the app publishes to (its first, or `topic`) that acks every
 * message after `seen` has looked at it.
 */
export async function subscribeCounterpart(
  stack: ProcessStack,
  seen: (m: Message) => void = () => undefined,
  topic: string | undefined = stack.app.publishes[0],
): Promise<Subscription> {
  if (topic === undefined) throw new Error(`the app ${stack.app.name} publishes to no topic`);
  const [counterpart] = await stack.pubsub.topic(topic).createSubscription('counterpart');
  counterpart.on('error', () => undefined);
  counterpart.on('message', (m: Message) => {
    seen(m);
    m.ack();
  });
  return counterpart;
}
