import type { DuplicateWaitingPoint } from '../engine/store/apply';
import type { JobState } from '../engine/state';
import type { Logger } from '../log';
import type { JobQueue } from '../tasks/job-queue';
import { errorMessage } from '../core/errors';

export interface DispatchOptions<J> {
  /** Reports a job whose task exists already (default: an INFO line; the sweep escalates old jobs). */
  readonly onExists?: (log: Logger, job: J) => void;
}

const logExisting = (log: Logger, job: Pick<JobState, 'id' | 'activityId'>): void => log.info('job task already existed', { jobId: job.id, activityId: job.activityId });

/**
 * After a commit: create the Cloud Task of every new job. Never inside the
 * transaction (it may run several times). A failure here loses nothing: the
 * job document exists, and the sweep re-dispatches PENDING jobs (a task that
 * does exist answers ALREADY_EXISTS). No write records the dispatch: it would
 * cost one more Firestore write per job for what the task name already tells.
 */
export async function dispatchJobs<J extends Pick<JobState, 'id' | 'activityId'>>(queue: JobQueue, jobs: readonly J[], log: Logger, options: DispatchOptions<J> = {}): Promise<number> {
  let dispatched = 0;
  await Promise.all(
    jobs.map(async (job) => {
      try {
        const outcome = await queue.enqueue(job.id);
        dispatched += 1;
        if (outcome === 'EXISTS') (options.onExists ?? logExisting)(log, job);
      } catch (err) {
        log.warn('could not create the job task; the sweep will retry', { jobId: job.id, activityId: job.activityId, error: errorMessage(err) });
      }
    }),
  );
  return dispatched;
}

/** The double-token guard's alarm: an ERROR entry per duplicate waiting point, for the incident alert. */
export function logDuplicates(log: Logger, duplicates: readonly DuplicateWaitingPoint[]): void {
  for (const d of duplicates) {
    log.error('duplicate waiting point: the next message for this key will be ambiguous', {
      incident: 'DUPLICATE_WAITING_POINT',
      messageName: d.messageName,
      correlationKey: d.correlationKey,
      count: d.waiting.length,
      executions: d.waiting.map((w) => ({ processInstanceId: w.processInstanceId, executionId: w.executionId, activityId: w.activityId })),
    });
  }
}
