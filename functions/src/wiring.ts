import type { Request, Response } from '@google-cloud/functions-framework';
import { join } from 'node:path';
import type { PushTokenVerifier } from './auth/push-token';
import type { Config } from './config';
import { requireFireTimerUrl, requirePushAuth, requireRunJobUrl } from './config-requirements';
import { lazy, lazyAsync } from './core/lazy';
import { createLogger } from './log';
import { operationsDepsOf } from './operations/deps';
import { createPushHandler } from './receiver/receive-pubsub-push';
import type { Runtime } from './runtime';

/** An HTTP function as the Functions Framework takes it. */
export type HttpFunction = (req: Request, res: Response) => Promise<void>;

/**
 * Builds each deployed function from the configuration. A factory checks the
 * settings its function needs, so a missing one fails at start-up with the
 * variable's name. index.ts builds only the function a deployment serves.
 * Each is named for its function: `<functionName>Function`.
 */
export type FunctionFactory = (config: Config, runtime: Runtime) => HttpFunction;

/** The push token check both push endpoints share; null while INBOX_PUSH_AUTH=disabled. */
function pushVerifier(config: Config): (() => Promise<PushTokenVerifier>) | null {
  const auth = requirePushAuth(config);
  if (auth === null) return null;
  // google-auth-library is loaded on the first request, not at start-up.
  return lazyAsync(async () =>
    (await import('./auth/push-token')).googlePushTokenVerifier(auth.audience, auth.allowedEmails),
  );
}

/** Builds `receivePubSubPush` from the parsed configuration; clients are created on first use. */
export const receivePubSubPushFunction: FunctionFactory = (config, runtime) => {
  const relayUrl = config.relay.url;
  // The Cloud Tasks client is loaded on the first fast-path task, not at start-up.
  const queue = lazy(() =>
    (require('./tasks/job-queue') as typeof import('./tasks/job-queue')).relayQueue(config, relayUrl ?? ''),
  );
  return createPushHandler({
    db: runtime.db,
    registry: runtime.registry(),
    verifier: pushVerifier(config),
    log: createLogger(undefined, { function: 'receivePubSubPush' }),
    now: () => new Date(),
    maxBodyBytes: config.maxBodyBytes,
    writeTimeoutMs: config.writeTimeoutMs,
    shards: config.shards,
    fastPath: relayUrl === null ? null : (inboxId) => queue().enqueue(inboxId),
    payloadStore: runtime.payloadStore,
    claims: config.claims,
  });
};

/**
 * Builds `receiveDeadLetter`: same authentication as the receiver, but not
 * its size limit: it takes whatever Pub/Sub can deliver (the larger of the
 * receiver's limit and Pub/Sub's maximum), since what it refuses is lost.
 */
export const receiveDeadLetterFunction: FunctionFactory = (config, runtime) => {
  const { createDeadLetterHandler, DEAD_LETTER_MAX_BODY_BYTES } =
    require('./deadletter/receive-dead-letter') as typeof import('./deadletter/receive-dead-letter');
  return createDeadLetterHandler({
    db: runtime.db,
    registry: runtime.registry(),
    verifier: pushVerifier(config),
    log: createLogger(undefined, { function: 'receiveDeadLetter' }),
    now: () => new Date(),
    maxBodyBytes: Math.max(config.maxBodyBytes, DEAD_LETTER_MAX_BODY_BYTES),
    writeTimeoutMs: config.writeTimeoutMs,
    shards: config.shards,
    claims: config.claims,
    offload: {
      store: runtime.payloadStore,
      bucket: config.claims.payloadBucket,
      offloadBytes: config.claims.offloadBytes,
    },
  });
};

/**
 * The OIDC check of a Cloud Tasks target (runJob, fireTimer): the token
 * Cloud Tasks signs for `url` as the tasks service account (issuer:
 * INBOX_TASKS_OIDC_*); null while INBOX_PUSH_AUTH=disabled or without the account.
 */
function tasksVerifier(config: Config, url: string): (() => Promise<PushTokenVerifier>) | null {
  const tasksAccount = config.tasks.serviceAccount;
  if (config.pushAuth.mode === 'disabled' || tasksAccount === null) return null;
  return lazyAsync(async () =>
    (await import('./auth/push-token')).googlePushTokenVerifier(url, [tasksAccount], config.tasks.oidc),
  );
}

/** startProcess: starts a process instance, idempotent by process key and business key. */
export const startProcessFunction: FunctionFactory = (config, runtime) => {
  const runJobUrl = requireRunJobUrl(config);
  const fireTimerUrl = requireFireTimerUrl(config);
  const { createStartProcessHandler } = require('./process/start-process') as typeof import('./process/start-process');
  return createStartProcessHandler({
    db: runtime.db,
    engine: runtime.engine,
    queue: () => runtime.queue(runJobUrl),
    timerQueue: () => runtime.timerQueue(fireTimerUrl),
    log: createLogger(undefined, { function: 'startProcess' }),
    now: () => new Date(),
  });
};

/** runJob, the target of the jobs queue: runs one async step's handler; checks the token Cloud Tasks signs for its URL. */
export const runJobFunction: FunctionFactory = (config, runtime) => {
  const runJobUrl = requireRunJobUrl(config);
  const fireTimerUrl = requireFireTimerUrl(config);
  const { createRunJobHandler } = require('./jobs/run-job') as typeof import('./jobs/run-job');
  return createRunJobHandler({
    db: runtime.db,
    engine: runtime.engine,
    queue: () => runtime.queue(runJobUrl),
    timerQueue: () => runtime.timerQueue(fireTimerUrl),
    handlers: runtime.handlers,
    publishStepsOf: runtime.publishStepsOf,
    verifier: tasksVerifier(config, runJobUrl),
    log: createLogger(undefined, { function: 'runJob' }),
    now: () => new Date(),
    maxAttempts: config.jobMaxAttempts,
    queueMaxAttempts: config.jobsQueueMaxAttempts,
  });
};

/** fireTimer, the target of the timers queue: checks the token Cloud Tasks signs for its URL, as runJob does. */
export const fireTimerFunction: FunctionFactory = (config, runtime) => {
  const runJobUrl = requireRunJobUrl(config);
  const fireTimerUrl = requireFireTimerUrl(config);
  const { createFireTimerHandler } = require('./jobs/fire-timer') as typeof import('./jobs/fire-timer');
  return createFireTimerHandler({
    db: runtime.db,
    engine: runtime.engine,
    queue: () => runtime.queue(runJobUrl),
    timerQueue: () => runtime.timerQueue(fireTimerUrl),
    verifier: tasksVerifier(config, fireTimerUrl),
    log: createLogger(undefined, { function: 'fireTimer' }),
    now: () => new Date(),
  });
};

/** sweepJobs, on Cloud Scheduler: re-dispatches PENDING jobs past the grace period, then the timer sweep and the payload sweep. */
export const sweepJobsFunction: FunctionFactory = (config, runtime) => {
  const runJobUrl = requireRunJobUrl(config);
  const fireTimerUrl = requireFireTimerUrl(config);
  const { createSweepJobsHandler } = require('./jobs/sweep-jobs') as typeof import('./jobs/sweep-jobs');
  return createSweepJobsHandler({
    db: runtime.db,
    engine: runtime.engine,
    queue: () => runtime.queue(runJobUrl),
    timerQueue: () => runtime.timerQueue(fireTimerUrl),
    log: createLogger(undefined, { function: 'sweepJobs' }),
    now: () => new Date(),
    options: { graceMs: config.sweepGraceMs, stuckAfterMs: config.jobStuckAfterMs },
    payloadStore: runtime.payloadStore,
  });
};

/** relayInbox, on Cloud Scheduler and the receiver's fast-path task: OPEN inbox documents into the engine. */
export const relayInboxFunction: FunctionFactory = (config, runtime) => {
  const runJobUrl = requireRunJobUrl(config);
  const fireTimerUrl = requireFireTimerUrl(config);
  const { createRelayHandler } = require('./relay/relay-inbox') as typeof import('./relay/relay-inbox');
  return createRelayHandler({
    db: runtime.db,
    engine: runtime.engine,
    queue: () => runtime.queue(runJobUrl),
    timerQueue: () => runtime.timerQueue(fireTimerUrl),
    log: createLogger(undefined, { function: 'relayInbox' }),
    relay: config.relay,
    shards: config.shards,
    now: () => new Date(),
    random: Math.random,
    payloadStore: runtime.payloadStore,
  });
};

/** inboxConsole with its page's files in `assetsDir` (tests pass their own). */
export const inboxConsoleFunctionWith =
  (assetsDir: string): FunctionFactory =>
  (config, runtime) => {
    const { createConsoleHandler } = require('./console/handler') as typeof import('./console/handler');
    const { createAccess } = require('./console/access') as typeof import('./console/access');
    const access = config.console.access;
    // google-auth-library is loaded on the first API request, not at start-up; local access never loads it.
    const verifier = lazyAsync(async () => {
      if (access.mode !== 'iam') throw new Error('local console access verifies no token');
      return (await import('./auth/push-token')).googleIdTokenVerifier(access.audiences, access.oidc);
    });
    const log = createLogger(undefined, { function: 'inboxConsole' });
    return createConsoleHandler({
      ops: operationsDepsOf(config, runtime, log),
      access: createAccess(config.console, verifier),
      accessMode: access.mode,
      projectId: config.projectId,
      app: () => ({ name: runtime.app().name, messages: runtime.registry().map((m) => m.name) }),
      assetsDir,
      log,
    });
  };

/** The operator console: its page from dist/console-page/ (beside this module once compiled: dist/wiring.js). */
export const inboxConsoleFunction: FunctionFactory = inboxConsoleFunctionWith(join(__dirname, 'console-page'));
