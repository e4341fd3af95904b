import type { Firestore } from '@google-cloud/firestore';
import { QUERIES } from '../queries';
import type { Logger } from '../log';
import type { JobQueue } from '../tasks/job-queue';
import { dispatchJobs } from './dispatch';

/** Jobs younger than this are left alone: their creator is probably still dispatching them. */
export const SWEEP_GRACE_MS = 60_000;

/**
 * Re-dispatches PENDING jobs whose Cloud Task was never created (a crash
 * between commit and enqueue). Creating a task that does exist answers
 * ALREADY_EXISTS, so a sweep racing the normal dispatch is harmless.
 */
export async function sweepUndispatchedJobs(db: Firestore, queue: JobQueue, log: Logger, now: Date, limit = 500): Promise<number> {
  const snap = await QUERIES.undispatchedJobs.build(db, new Date(now.getTime() - SWEEP_GRACE_MS), limit).get();
  if (snap.empty) return 0;
  const jobs = snap.docs.map((d) => ({ id: d.id, activityId: String(d.get('activityId')) }));
  log.warn('re-dispatching jobs whose task was never created', { count: jobs.length });
  return dispatchJobs(db, queue, jobs, log);
}
