import type { Firestore } from '@google-cloud/firestore';
import type { Config } from '../config';
import type { Engine } from '../engine/engine';
import type { Logger } from '../log';
import type { MessageRegistry } from '../receiver/registry';
import type { PayloadStore } from '../storage/payload-store';
import type { JobQueue } from '../tasks/job-queue';
import type { OperationsDeps } from './types';

/** The clients an operator face has (runtime.ts's Runtime has them; named here so operations/ needs no composition root). */
export interface OperatorClients {
  readonly db: () => Firestore;
  readonly engine: () => Promise<Engine>;
  readonly registry: () => MessageRegistry;
  readonly modelsDir: () => string;
  readonly queue: (runJobUrl: string) => JobQueue;
  readonly timerQueue: (fireTimerUrl: string) => JobQueue;
  readonly payloadStore: () => PayloadStore;
}

/**
 * OperationsDeps from the configuration and the clients: the one place both
 * faces (the console's wiring, the CLI's context) build them. Without
 * INBOX_RUN_JOB_URL / INBOX_FIRE_TIMER_URL a repair's new jobs and timers
 * wait for sweepJobs, as the types say.
 */
export function operationsDepsOf(
  config: Config,
  clients: OperatorClients,
  log: Logger,
  now: () => Date = () => new Date(),
): OperationsDeps {
  const { runJobUrl, fireTimerUrl } = config.tasks;
  return {
    db: clients.db,
    engine: clients.engine,
    registry: clients.registry,
    modelsDir: clients.modelsDir,
    jobQueue: runJobUrl === null ? null : () => clients.queue(runJobUrl),
    timerQueue: fireTimerUrl === null ? null : () => clients.timerQueue(fireTimerUrl),
    payloadStore: clients.payloadStore,
    config,
    log,
    now,
  };
}
