import type { JobState, TimerState } from '../engine/state';
import { dispatchJobs, dispatchTimers } from '../jobs/dispatch';
import type { Logger } from '../log';
import type { CliContext } from './context';

/** How many of a repair's new jobs and timers got their Cloud Task here. */
export interface RepairDispatch {
  readonly dispatched: number;
  readonly timersDispatched: number;
}

/**
 * After a repair's commit: create the Cloud Tasks of its new jobs and timers
 * (where runJob's and fireTimer's URLs are configured). What is not
 * dispatched here is not lost: sweepJobs dispatches the jobs, and fires the
 * timers once they are overdue; {@link reportUndispatched} says so.
 */
export async function dispatchAfterRepair(ctx: CliContext, created: { readonly jobs: readonly JobState[]; readonly timers: readonly TimerState[] }, log: Logger): Promise<RepairDispatch> {
  const { runJobUrl, fireTimerUrl } = ctx.config.tasks;
  const [dispatched, timersDispatched] = await Promise.all([
    runJobUrl === null ? 0 : dispatchJobs(ctx.runtime.queue(runJobUrl), created.jobs, log),
    fireTimerUrl === null ? 0 : dispatchTimers(ctx.runtime.timerQueue(fireTimerUrl), created.timers, log),
  ]);
  return { dispatched, timersDispatched };
}

/** The lines that tell the operator which new jobs and timers the sweep will take care of (none with --json). */
export function reportUndispatched(ctx: CliContext, created: { readonly jobs: readonly unknown[]; readonly timers: readonly unknown[] }, done: RepairDispatch): void {
  if (ctx.json) return;
  const jobs = created.jobs.length - done.dispatched;
  const timers = created.timers.length - done.timersDispatched;
  if (jobs > 0) ctx.io.out(`${jobs} job(s) not dispatched here (INBOX_RUN_JOB_URL unset or Cloud Tasks failed): sweepJobs dispatches them within a few minutes`);
  if (timers > 0) ctx.io.out(`${timers} timer(s) not dispatched here (INBOX_FIRE_TIMER_URL unset or Cloud Tasks failed): sweepJobs fires each once it is overdue by INBOX_SWEEP_GRACE_MS`);
}
