import type { Firestore, QueryDocumentSnapshot } from '@google-cloud/firestore';
import { DEFAULTS } from '../config';
import { classifyFailure, errorMessage, storableText } from '../core/errors';
import { isTimestamp } from '../core/timestamp';
import type { Engine } from '../engine/engine';
import { refs, STATE_SHARDS } from '../engine/store/collections';
import { failTimerRun } from '../engine/store/fail-timer';
import { fireTimerRun } from '../engine/store/fire-timer';
import { TIMER_HORIZON_MS } from '../engine/store/timers';
import { startDueByTimer, timerStartsOf } from '../engine/store/timer-starts';
import type { Logger } from '../log';
import { QUERIES } from '../queries';
import { dispatchSettled, logDuplicates, type SettledQueues } from './dispatch';

/** How much one sweep call does (sweepJobs runs it once a minute). */
export interface TimerSweepOptions {
  /** A FAR timer gets its task once due within this, ms (TIMER_HORIZON_MS, 29 days: Cloud Tasks takes at most 30). */
  readonly horizonMs?: number;
  /** A PENDING timer overdue by more than this, ms, is fired inline: its task was lost (INBOX_SWEEP_GRACE_MS). */
  readonly graceMs?: number;
  /** Timers read per shard and per query in one call (default 20): at most 16 × 20 tasks created and 16 × 20 firings. */
  readonly perShard?: number;
  /** Overdue timers fired at once (default 4). */
  readonly parallelism?: number;
}

/** What one timer sweep did; the sweepJobs answer and its log line carry it. */
export interface TimerSweepSummary {
  /** FAR timers whose task was created (or found) and that are NEAR now. */
  broughtNear: number;
  /** Overdue timers fired inline (FIRED by this sweep). */
  fired: number;
  /** Overdue timers whose inline firing found them done meanwhile: their task came, or their token moved on. */
  settledMeanwhile: number;
  /** Timers the sweep could not handle this time (Cloud Tasks or Firestore failed): the next call tries again. */
  failures: number;
  /** Instances started by a timer start event whose time came (engine/store/timer-starts.ts). */
  startedBySchedule: number;
  /**
   * Document reads billed for the sweep's queries: one per timer listed, at
   * least one per query (Firestore bills an empty query one read), so 32 a
   * call when there is nothing to do. The firings' own transactions are not in it.
   */
  queryReads: number;
}

/** What the sweep needs of the function it runs in (sweepJobs). */
export interface TimerSweepDeps {
  readonly db: Firestore;
  /** The deployed models; loaded only when an overdue timer is to be fired. */
  readonly engine: () => Promise<Engine>;
  readonly queues: SettledQueues;
  readonly log: Logger;
  readonly now: Date;
}

interface Found {
  readonly id: string;
  readonly activityId: string;
  readonly processInstanceId: string;
  readonly dueAt: Date;
}

const found = (d: QueryDocumentSnapshot): Found | null => {
  const dueAt: unknown = d.get('dueAt');
  // A document without a due time was not written by this code: nothing to schedule it by.
  return isTimestamp(dueAt)
    ? {
        id: d.id,
        activityId: String(d.get('activityId')),
        processInstanceId: String(d.get('processInstanceId')),
        dueAt: dueAt.toDate(),
      }
    : null;
};

/**
 * The timer sweep, run inside sweepJobs (one scheduler job). Per shard
 * (STATE_SHARDS, so the due-time index has no single hot end) it reads:
 *
 * - FAR timers (set more than the horizon ahead, so no task yet) that are
 *   now due within it: the task is created (name = timer id, scheduleTime =
 *   dueAt), then the timer is marked NEAR. A crash in between leaves it FAR:
 *   the next call finds the task existing and marks it then.
 * - PENDING timers overdue by more than the grace: their task was lost (a
 *   crash between commit and dispatch, a task that gave up) or is late. They
 *   are fired here, through the same transaction as fireTimer, and logged at
 *   WARNING: late, never never. A task still on its way then finds the timer
 *   FIRED and ends.
 *
 * - Timer start events whose time came: their instances start
 *   ({@link startScheduled}).
 *
 * Bounded: `perShard` timers per query and shard per call; what is left is
 * the next call's. Failures are counted and logged, never thrown: the job
 * sweep beside it must still run, and nothing is lost (the timer stays
 * PENDING for the next call).
 */
export async function sweepTimers(deps: TimerSweepDeps, options: TimerSweepOptions = {}): Promise<TimerSweepSummary> {
  const {
    horizonMs = TIMER_HORIZON_MS,
    graceMs = DEFAULTS.INBOX_SWEEP_GRACE_MS,
    perShard = 20,
    parallelism = 4,
  } = options;
  const { db, now } = deps;
  const shards = Array.from({ length: STATE_SHARDS }, (_, shard) => shard);
  const [far, overdue] = await Promise.all([
    Promise.all(
      shards.map((shard) => QUERIES.farTimersDue.build(db, shard, new Date(now.getTime() + horizonMs), perShard).get()),
    ),
    Promise.all(
      shards.map((shard) => QUERIES.overdueTimers.build(db, shard, new Date(now.getTime() - graceMs), perShard).get()),
    ),
  ]);
  const overdueTimers = overdue.flatMap((snap) => snap.docs.map(found)).filter((t): t is Found => t !== null);
  const overdueIds = new Set(overdueTimers.map((t) => t.id));
  // An overdue FAR timer is fired below; a task for it as well would only be a second way to the same end.
  const nearing = far
    .flatMap((snap) => snap.docs.map(found))
    .filter((t): t is Found => t !== null && !overdueIds.has(t.id));
  const queryReads = [...far, ...overdue].reduce((n, snap) => n + Math.max(1, snap.size), 0);
  const summary: TimerSweepSummary = {
    broughtNear: 0,
    fired: 0,
    settledMeanwhile: 0,
    failures: 0,
    startedBySchedule: 0,
    queryReads,
  };
  await Promise.all(nearing.map((timer) => bringNear(deps, timer, summary)));
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let timer = overdueTimers[next++]; timer !== undefined; timer = overdueTimers[next++])
      await fireLate(deps, timer, summary);
  };
  await Promise.all(Array.from({ length: Math.min(parallelism, overdueTimers.length) }, worker));
  await startScheduled(deps, summary);
  if (nearing.length + overdueTimers.length + summary.startedBySchedule > 0)
    deps.log.info('timer sweep', { ...summary });
  return summary;
}

/**
 * Every timer start event of the deployed models whose time came starts its
 * instance (one transaction each: engine/store/timer-starts.ts), then its
 * jobs and timers are dispatched. A failure is counted and logged; the next
 * call tries again, and the business key makes a second start of the same
 * time find the first.
 */
async function startScheduled(deps: TimerSweepDeps, summary: TimerSweepSummary): Promise<void> {
  const engine = await deps.engine();
  for (const processKey of engine.processKeys) {
    const model = engine.model(processKey);
    for (const event of timerStartsOf(model)) {
      try {
        const outcome = await startDueByTimer(deps.db, engine, model, event, deps.now);
        if (outcome.kind !== 'STARTED') continue;
        summary.startedBySchedule += 1;
        logDuplicates(deps.log, outcome.duplicates);
        await dispatchSettled(deps.queues, outcome, deps.log);
        deps.log.info('process started by its timer start event', {
          processKey,
          activityId: event.id,
          processInstanceId: outcome.processInstanceId,
          businessKey: outcome.businessKey,
        });
      } catch (err) {
        summary.failures += 1;
        deps.log.warn('could not start a process by its timer start event; the next sweep tries again', {
          processKey,
          activityId: event.id,
          code: classifyFailure(err).code,
          error: errorMessage(err),
        });
      }
    }
  }
}

/** A FAR timer now within the horizon: its task, then horizon NEAR (an update: a timer deleted meanwhile stays deleted). */
async function bringNear(deps: TimerSweepDeps, timer: Found, summary: TimerSweepSummary): Promise<void> {
  try {
    await deps.queues.timers.enqueue(timer.id, { scheduleTime: timer.dueAt });
  } catch (err) {
    summary.failures += 1;
    deps.log.warn('could not create the task of a timer now within the horizon; the next sweep tries again', {
      timerId: timer.id,
      dueAt: timer.dueAt.toISOString(),
      error: errorMessage(err),
    });
    return;
  }
  try {
    await refs.timer(deps.db, timer.id).update({ horizon: 'NEAR' });
    summary.broughtNear += 1;
  } catch (err) {
    // NOT_FOUND: cancelled meanwhile; its task will find nothing and end. Anything else: still FAR, the next call marks it.
    if ((err as { code?: unknown }).code === NOT_FOUND) return;
    summary.failures += 1;
    deps.log.warn('timer task created but the timer not marked NEAR; the next sweep marks it', {
      timerId: timer.id,
      error: errorMessage(err),
    });
  }
}

const NOT_FOUND = 5;

/** An overdue timer fired inline, through the same transaction as fireTimer, then what it created dispatched. */
async function fireLate(deps: TimerSweepDeps, timer: Found, summary: TimerSweepSummary): Promise<void> {
  const context = {
    timerId: timer.id,
    processInstanceId: timer.processInstanceId,
    activityId: timer.activityId,
    dueAt: timer.dueAt.toISOString(),
  };
  try {
    const firing = await fireTimerRun(deps.db, await deps.engine(), timer.id, deps.now);
    if (firing.status !== 'FIRED') {
      summary.settledMeanwhile += 1;
      return;
    }
    summary.fired += 1;
    deps.log.warn('timer fired by the sweep: its task was lost or late', {
      ...context,
      lateMs: deps.now.getTime() - timer.dueAt.getTime(),
    });
    logDuplicates(deps.log, firing.duplicates);
    await dispatchSettled(deps.queues, firing, deps.log);
  } catch (err) {
    summary.failures += 1;
    const failure = classifyFailure(err);
    if (failure.kind === 'step') {
      // The engine cannot apply its path: recorded as an incident and the timer deleted, so no sweep tries it again.
      const error = storableText(errorMessage(err));
      const recorded = await failTimerRun(deps.db, timer.id, error, deps.now).catch((e: unknown) => errorMessage(e));
      deps.log.error('overdue timer could not fire: the engine cannot apply its path; incident STEP_FAILED', {
        ...context,
        incident: 'STEP_FAILED',
        recorded,
        error,
      });
      return;
    }
    deps.log.log(
      failure.kind === 'retryable' ? 'WARNING' : 'ERROR',
      'overdue timer not fired; the next sweep tries again',
      { ...context, code: failure.code, error: errorMessage(err) },
    );
  }
}
