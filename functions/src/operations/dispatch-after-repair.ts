import type { JobState, TimerState } from '../engine/state';
import { dispatchJobs, dispatchTimers } from '../jobs/dispatch';
import type { Logger } from '../log';
import type { OperationsDeps } from './types';

/** How many of a repair's new jobs and timers got their Cloud Task here. */
export interface RepairDispatch {
  readonly dispatched: number;
  readonly timersDispatched: number;
}

/**
 * After a repair's commit: create the Cloud Tasks of its new jobs and timers
 * (where the queues are configured: runJob's and fireTimer's URLs). What is
 * not dispatched here is not lost: sweepJobs dispatches the jobs, and fires
 * the timers once they are overdue. Dispatch failures are logged to `log`.
 */
export async function dispatchAfterRepair(
  deps: Pick<OperationsDeps, 'jobQueue' | 'timerQueue' | 'now'>,
  created: { readonly jobs: readonly JobState[]; readonly timers: readonly TimerState[] },
  log: Logger,
): Promise<RepairDispatch> {
  const { jobQueue, timerQueue } = deps;
  const [dispatched, timersDispatched] = await Promise.all([
    jobQueue === null || created.jobs.length === 0 ? 0 : dispatchJobs(jobQueue(), created.jobs, log),
    timerQueue === null || created.timers.length === 0 ? 0 : dispatchTimers(timerQueue(), created.timers, log),
  ]);
  return { dispatched, timersDispatched };
}
