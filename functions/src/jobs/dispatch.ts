import type { DuplicateWaitingPoint } from '../engine/store/apply';
import { horizonOf } from '../engine/store/timers';
import type { JobState, TimerState } from '../engine/state';
import type { Logger } from '../log';
import type { JobQueue } from '../tasks/job-queue';
import { errorMessage } from '../core/errors';
import { withSpan } from '../trace/trace';

export interface DispatchOptions<J> {
  /** Reports a job whose task exists already (default: an INFO line; the sweep escalates old jobs). */
  readonly onExists?: (log: Logger, job: J) => void;
}

const logExisting = (log: Logger, job: Pick<JobState, 'id' | 'activityId'>): void =>
  log.info('job task already existed', { jobId: job.id, activityId: job.activityId });

/**
 * After a commit: create the Cloud Task of every new job. Never inside the
 * transaction (it may run several times). A failure here loses nothing: the
 * job is stored in its instance document, and the sweep re-dispatches PENDING jobs (a task that
 * does exist answers ALREADY_EXISTS). No write records the dispatch: it would
 * cost one more Firestore write per job for what the task name already tells.
 */
export async function dispatchJobs<J extends Pick<JobState, 'id' | 'activityId' | 'processInstanceId'>>(
  queue: JobQueue,
  jobs: readonly J[],
  log: Logger,
  options: DispatchOptions<J> = {},
): Promise<number> {
  let dispatched = 0;
  await Promise.all(
    jobs.map(async (job) => {
      try {
        // A span per job task: its traceparent header names it, so the job's run hangs under the step that created it.
        const outcome = await withSpan(
          'job task',
          'active',
          () => queue.enqueue(job.id, { processInstanceId: job.processInstanceId }),
          { 'inbox.job.id': job.id, 'inbox.job.activity': job.activityId },
        );
        dispatched += 1;
        if (outcome === 'EXISTS') (options.onExists ?? logExisting)(log, job);
      } catch (err) {
        log.warn('could not create the job task; the sweep will retry', {
          jobId: job.id,
          activityId: job.activityId,
          error: errorMessage(err),
        });
      }
    }),
  );
  return dispatched;
}

/**
 * After a commit: create the Cloud Task of every new NEAR timer (the store
 * lists only those in `Settled.timers`; a FAR one gets its task from the
 * sweep once it is due within the horizon), named after the timer and
 * scheduled at its due time. A failure loses nothing: the timer document
 * exists, and the sweep fires a PENDING timer whose task never came once it
 * is overdue by the sweep grace (jobs/sweep-timers.ts): late, never never.
 * 'EXISTS' is a re-run of the same step (the same timer id): its task is there.
 * Returns how many got their task.
 */
export async function dispatchTimers(
  queue: JobQueue,
  timers: readonly Pick<TimerState, 'id' | 'activityId' | 'dueAt'>[],
  log: Logger,
  now: Date = new Date(),
): Promise<number> {
  let dispatched = 0;
  // Settled.timers are NEAR already; a timer re-read for a re-run (a repair that landed) may be FAR: Cloud Tasks
  // would refuse its scheduleTime, and the sweep creates its task once it is near.
  const near = timers.filter((t) => horizonOf(t.dueAt, now) === 'NEAR');
  await Promise.all(
    near.map(async (timer) => {
      try {
        await queue.enqueue(timer.id, { scheduleTime: timer.dueAt });
        dispatched += 1;
      } catch (err) {
        log.warn('could not create the timer task; the sweep fires the timer once it is overdue', {
          timerId: timer.id,
          activityId: timer.activityId,
          dueAt: timer.dueAt.toISOString(),
          error: errorMessage(err),
        });
      }
    }),
  );
  return dispatched;
}

/** The two queues the work a commit leaves goes to: jobs to runJob's, timers to fireTimer's. */
export interface SettledQueues {
  readonly jobs: JobQueue;
  readonly timers: JobQueue;
}

/** How many of a commit's new jobs and timers got their Cloud Task. */
export interface Dispatched {
  readonly jobs: number;
  readonly timers: number;
}

/**
 * After a commit: the Cloud Tasks of its new jobs and timers (what every
 * store operation returns in `Settled`), both at once.
 */
export async function dispatchSettled(
  queues: SettledQueues,
  settled: {
    readonly jobs: readonly Pick<JobState, 'id' | 'activityId' | 'processInstanceId'>[];
    readonly timers: readonly Pick<TimerState, 'id' | 'activityId' | 'dueAt'>[];
  },
  log: Logger,
): Promise<Dispatched> {
  const [jobs, timers] = await Promise.all([
    dispatchJobs(queues.jobs, settled.jobs, log),
    dispatchTimers(queues.timers, settled.timers, log),
  ]);
  return { jobs, timers };
}

/** The double-token guard's alarm: an ERROR entry per duplicate waiting point, for the incident alert. */
export function logDuplicates(log: Logger, duplicates: readonly DuplicateWaitingPoint[]): void {
  for (const d of duplicates) {
    log.error('duplicate waiting point: the next message for this key will be ambiguous', {
      incident: 'DUPLICATE_WAITING_POINT',
      messageName: d.messageName,
      correlationKey: d.correlationKey,
      count: d.waiting.length,
      executions: d.waiting.map((w) => ({
        processInstanceId: w.processInstanceId,
        executionId: w.executionId,
        activityId: w.activityId,
      })),
    });
  }
}
