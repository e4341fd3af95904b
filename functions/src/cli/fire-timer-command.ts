import type { ExecutionState, TimerState } from '../engine/state';
import { refs } from '../engine/store/collections';
import { fireTimerRun, TIMER_EARLY_TOLERANCE_MS } from '../engine/store/fire-timer';
import { asTimer } from '../engine/store/timers';
import { timerIsLive } from '../engine/timer-transitions';
import { logDuplicates } from '../jobs/dispatch';
import { createLogger } from '../log';
import type { CliContext } from './context';
import { dispatchAfterRepair, reportUndispatched } from './dispatch-after-repair';
import { view } from '../operations/documents';
import { RefusedError } from '../operations/refused';
import { readStoredInstance } from '../operations/stored-instance';
import { ALREADY_APPLIED, print } from './output';
import { formatAge, parseTimerId } from './parse';

const sameTime = (a: Date | null, b: Date): boolean => a !== null && a.getTime() === b.getTime();

/** Why a timer is not fired: the one line the CLI prints (exit 1). STALE is decided by the transaction, which deletes such a timer. */
function refusal(
  id: string,
  timer: TimerState | undefined,
  token: ExecutionState | null,
  now: Date,
): { readonly stale: boolean; readonly why: string } | null {
  if (timer === undefined)
    return {
      stale: false,
      why: `no timer ${id}: its token left without it (it is deleted then), or it fired and expired; \`inbox timers\` lists the PENDING ones`,
    };
  if (timer.status === 'FIRED')
    return {
      stale: false,
      why: `timer ${id} is FIRED (at ${timer.firedAt?.toISOString() ?? 'an unknown time'}): only a PENDING timer can be fired`,
    };
  if (now.getTime() < timer.dueAt.getTime() - TIMER_EARLY_TOLERANCE_MS) {
    return {
      stale: false,
      why: `timer ${id} is not due until ${timer.dueAt.toISOString()} (${formatAge(now.getTime() - timer.dueAt.getTime())}): its Cloud Task fires it then (a timer over 29 days ahead gets its task from the sweep); nothing to repair`,
    };
  }
  if (token === null || !timerIsLive(token, timer)) {
    return {
      stale: true,
      why: `timer ${id} is stale: its token ${timer.executionId} ${token === null ? 'is gone' : `is ${token.status} at ${token.activityId}`} and no longer waits with it`,
    };
  }
  return null;
}

/**
 * `inbox repair fire-timer TIMER_ID [--dry-run]`: fires a due PENDING timer
 * now through the same transaction its Cloud Task would run (fireTimerRun),
 * for a timer whose task was lost (the sweep would fire it too, a grace
 * later). Refused for a timer that is gone, FIRED, not yet due, or stale;
 * a stale one is deleted by the attempt, as the task's own call would.
 * After the commit, the jobs the firing created are dispatched (with
 * INBOX_RUN_JOB_URL) or left to sweepJobs, and so are its new timers.
 */
export async function fireTimerCommand(ctx: CliContext, text: string, options: { dryRun?: boolean }): Promise<void> {
  const id = parseTimerId(text);
  const db = ctx.db();
  const now = ctx.now();
  const stored = await refs.timer(db, id).get();
  const timer = stored.exists ? asTimer(view(stored)) : undefined;
  const owner = timer === undefined ? null : await readStoredInstance(db, timer.processInstanceId);
  const token = owner?.tokens.find((t) => t.id === timer?.executionId) ?? null;
  const refused = refusal(id, timer, token, now);
  if (options.dryRun === true) {
    if (refused !== null)
      throw new RefusedError(
        refused.stale ? `${refused.why}: firing it would delete it and move nothing` : refused.why,
      );
    const t = timer as TimerState;
    print(
      ctx,
      { wouldFire: id, timer: t, token },
      ['would fire', 'due', 'activity', 'token', 'waiting at', 'instance'],
      [
        [
          id,
          `${t.dueAt.toISOString()} (overdue ${formatAge(now.getTime() - t.dueAt.getTime())})`,
          t.activityId,
          t.executionId,
          t.waitingAt,
          t.processInstanceId,
        ],
      ],
    );
    return;
  }
  // Said in words before the transaction; a stale timer goes through it, which deletes the timer as its task's call would.
  if (refused !== null && !refused.stale) throw new RefusedError(refused.why);
  const engine = await ctx.runtime.engine();
  const fired = await fireTimerRun(db, engine, id, now);
  // A re-run of the transaction after a commit that landed finds the timer FIRED at this run's `now`: this run fired it.
  const ours = fired.status === 'ALREADY_FIRED' && sameTime(fired.timer?.firedAt ?? null, now);
  if (fired.status === 'STALE')
    throw new RefusedError(
      `${refusal(id, fired.timer, token, now)?.why ?? `timer ${id} is stale: its token no longer waits with it`}: the timer is deleted, nothing moved`,
    );
  if (fired.status !== 'FIRED' && !ours)
    throw new RefusedError(refusal(id, fired.timer, token, now)?.why ?? `timer ${id}: ${fired.status}`);
  const log = createLogger((line) => ctx.io.err(line), { function: 'inbox-cli' });
  logDuplicates(log, fired.duplicates);
  const done = await dispatchAfterRepair(ctx, fired, log);
  const result = {
    fired: id,
    status: 'FIRED',
    alreadyApplied: ours,
    timer: fired.timer,
    jobs: fired.jobs,
    timers: fired.timers,
    ...done,
  };
  print(
    ctx,
    result,
    ['fired', 'activity', 'token', 'instance', 'new jobs', 'dispatched', 'new timers', 'timers dispatched'],
    [
      [
        id,
        timer?.activityId,
        timer?.executionId,
        timer?.processInstanceId,
        fired.jobs.length,
        done.dispatched,
        fired.timers.length,
        done.timersDispatched,
      ],
    ],
  );
  if (ctx.json) return;
  reportUndispatched(ctx, fired, done);
  if (ours) ctx.io.out(ALREADY_APPLIED);
}
