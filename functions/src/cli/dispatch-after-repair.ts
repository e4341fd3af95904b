import type { JobState, TimerState } from '../engine/state';
import type { Logger } from '../log';
import { dispatchAfterRepair as dispatch, type RepairDispatch } from '../operations/dispatch-after-repair';
import type { CliContext } from './context';
import { operationsDeps } from './operations-deps';

/** operations' dispatchAfterRepair (the implementation) for a CLI command; failures logged to `log`. */
export async function dispatchAfterRepair(
  ctx: CliContext,
  created: { readonly jobs: readonly JobState[]; readonly timers: readonly TimerState[] },
  log: Logger,
): Promise<RepairDispatch> {
  return dispatch(operationsDeps(ctx), created, log);
}

/** The lines that tell the operator which new jobs and timers the sweep will take care of (none with --json). */
export function reportUndispatched(
  ctx: CliContext,
  created: { readonly jobs: readonly unknown[]; readonly timers: readonly unknown[] },
  done: RepairDispatch,
): void {
  if (ctx.json) return;
  const jobs = created.jobs.length - done.dispatched;
  const timers = created.timers.length - done.timersDispatched;
  if (jobs > 0)
    ctx.io.out(
      `${jobs} job(s) not dispatched here (INBOX_RUN_JOB_URL unset or Cloud Tasks failed): sweepJobs dispatches them within a few minutes`,
    );
  if (timers > 0)
    ctx.io.out(
      `${timers} timer(s) not dispatched here (INBOX_FIRE_TIMER_URL unset or Cloud Tasks failed): sweepJobs fires each once it is overdue by INBOX_SWEEP_GRACE_MS`,
    );
}
