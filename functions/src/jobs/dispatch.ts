import type { DuplicateWaitingPoint } from '../engine/store/apply';
import type { JobState } from '../engine/state';
import type { Logger } from '../log';
import type { JobQueue } from '../tasks/job-queue';

/**
 * After a commit: create the Cloud Task of every new job. Never inside the
 * transaction (it may run several times). A failure here loses nothing: the
 * job document exists, and the sweep re-dispatches PENDING jobs (a task that
 * does exist answers ALREADY_EXISTS). No write records the dispatch: it would
 * cost one more Firestore write per job for what the task name already tells.
 */
export async function dispatchJobs(queue: JobQueue, jobs: readonly Pick<JobState, 'id' | 'activityId'>[], log: Logger): Promise<number> {
  let dispatched = 0;
  await Promise.all(
    jobs.map(async (job) => {
      try {
        const outcome = await queue.enqueue(job.id);
        dispatched += 1;
        if (outcome === 'EXISTS') log.info('job task already existed', { jobId: job.id, activityId: job.activityId });
      } catch (err) {
        log.warn('could not create the job task; the sweep will retry', { jobId: job.id, activityId: job.activityId, error: err instanceof Error ? err.message : String(err) });
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
