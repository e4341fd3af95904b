import type { Firestore } from '@google-cloud/firestore';
import { QUERIES } from '../queries';
import type { Logger } from '../log';
import type { JobQueue } from '../tasks/job-queue';
import { dispatchJobs } from './dispatch';

import { DEFAULTS } from '../config';

/** Jobs younger than this are left alone: their creator is probably still dispatching them (INBOX_SWEEP_GRACE_MS). */
export const SWEEP_GRACE_MS = DEFAULTS.INBOX_SWEEP_GRACE_MS;

/**
 * Re-dispatches PENDING jobs older than the grace period: the ones whose Cloud
 * Task was never created (a crash between commit and enqueue) get it now; for
 * the others (still retrying) the task exists and the call answers
 * ALREADY_EXISTS, which changes nothing.
 */
export async function sweepUndispatchedJobs(db: Firestore, queue: JobQueue, log: Logger, now: Date, graceMs: number = SWEEP_GRACE_MS, limit = 500): Promise<number> {
  const snap = await QUERIES.stalePendingJobs.build(db, new Date(now.getTime() - graceMs), limit).get();
  if (snap.empty) return 0;
  const jobs = snap.docs.map((d) => ({ id: d.id, activityId: String(d.get('activityId')) }));
  log.info('re-dispatching PENDING jobs older than the grace period', { count: jobs.length });
  return dispatchJobs(queue, jobs, log);
}
