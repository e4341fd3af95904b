import type { Request, Response } from '@google-cloud/functions-framework';
import { type Config, requireRunJobUrl } from './config';
import { lazyAsync } from './core/lazy';
import { createLogger } from './log';
import type { Runtime } from './runtime';

/** An HTTP function as the Functions Framework takes it. */
export type HttpFunction = (req: Request, res: Response) => Promise<void>;

/**
 * Builds each deployed function from the configuration. A factory checks the
 * settings its function needs, so a missing one fails at start-up with the
 * variable's name. index.ts builds only the function a deployment serves.
 */
export type FunctionFactory = (config: Config, runtime: Runtime) => HttpFunction;

export const startProcessFunction: FunctionFactory = (config, runtime) => {
  const runJobUrl = requireRunJobUrl(config);
  const { createStartProcessHandler } = require('./process/start-process') as typeof import('./process/start-process');
  return createStartProcessHandler({
    db: runtime.db,
    engine: runtime.engine,
    queue: () => runtime.queue(runJobUrl),
    log: createLogger(undefined, { function: 'startProcess' }),
    now: () => new Date(),
  });
};

export const runJobFunction: FunctionFactory = (config, runtime) => {
  const runJobUrl = requireRunJobUrl(config);
  const { createRunJobHandler } = require('./jobs/run-job') as typeof import('./jobs/run-job');
  const tasksAccount = config.tasks.serviceAccount;
  return createRunJobHandler({
    db: runtime.db,
    engine: runtime.engine,
    queue: () => runtime.queue(runJobUrl),
    handlers: runtime.handlers,
    // Cloud Tasks signs its OIDC token for the runJob URL as the tasks service account (issuer: INBOX_TASKS_OIDC_*).
    verifier:
      config.pushAuth.mode === 'disabled' || tasksAccount === null
        ? null
        : lazyAsync(async () => (await import('./auth/push-token')).googlePushTokenVerifier(runJobUrl, [tasksAccount], config.tasks.oidc)),
    log: createLogger(undefined, { function: 'runJob' }),
    now: () => new Date(),
    maxAttempts: config.jobMaxAttempts,
    queueMaxAttempts: config.jobsQueueMaxAttempts,
  });
};

export const sweepJobsFunction: FunctionFactory = (config, runtime) => {
  const runJobUrl = requireRunJobUrl(config);
  const log = createLogger(undefined, { function: 'sweepJobs' });
  return async (req, res) => {
    if (req.method !== 'POST') {
      res.status(405).json({ error: 'use POST (Cloud Scheduler)' });
      return;
    }
    const { sweepUndispatchedJobs } = require('./jobs/sweep-jobs') as typeof import('./jobs/sweep-jobs');
    try {
      const dispatched = await sweepUndispatchedJobs(runtime.db(), runtime.queue(runJobUrl), log, new Date(), { graceMs: config.sweepGraceMs, stuckAfterMs: config.jobStuckAfterMs });
      res.status(200).json({ dispatched });
    } catch (err) {
      log.error('job sweep failed', { error: err instanceof Error ? err.message : String(err) });
      res.status(503).json({ error: 'job sweep failed', retry: true });
    }
  };
};

export const relayInboxFunction: FunctionFactory = (config, runtime) => {
  const runJobUrl = requireRunJobUrl(config);
  const { createRelayHandler } = require('./relay/function') as typeof import('./relay/function');
  return createRelayHandler({
    db: runtime.db,
    engine: runtime.engine,
    queue: () => runtime.queue(runJobUrl),
    log: createLogger(undefined, { function: 'relayInbox' }),
    relay: config.relay,
    shards: config.shards,
    now: () => new Date(),
    random: Math.random,
  });
};
