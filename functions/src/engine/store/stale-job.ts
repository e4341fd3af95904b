import type { Firestore } from '@google-cloud/firestore';
import { type JobState, jobIsLive, STALE_JOB_ERROR } from '../state';
import { type InstanceDoc, readInstanceDoc, readJob, writeJobOf } from './instance-doc';
import { runUnitOfWork, type UnitOfWork } from './unit-of-work';

/**
 * Jobs whose token no longer waits for them: ended DONE with
 * {@link STALE_JOB_ERROR}, their token untouched. The rule of every place
 * that meets a job (runJob's start, its failure, its completion, a
 * transition whose token leaves the job's task): a job moves only the
 * token that waits for it.
 */

/** The job as it ends stale: DONE, now, with the reason. */
export const staleEnd = (job: JobState, now: Date): JobState => ({
  ...job,
  status: 'DONE',
  finishedAt: now,
  lastError: STALE_JOB_ERROR,
});

/** Whether the job of `doc` is stale: its token is gone or waits for something else. */
export const isStale = (doc: InstanceDoc, job: JobState): boolean => !jobIsLive(doc.tokens[job.executionId], job);

/** Ends a PENDING job stale within `uow` (its old-layout document, if any, folded into the instance). */
export async function endStale(uow: UnitOfWork, job: JobState, legacyPath: string | null, now: Date): Promise<void> {
  await writeJobOf(uow, staleEnd(job, now), legacyPath);
}

/** What {@link endStaleJob} found. LIVE: the token does wait for the job after all (nothing changed). */
export type StaleJobEnd = 'STALE' | 'LIVE' | 'ALREADY_FINISHED' | 'NOT_FOUND';

/**
 * runJob's start found the job's token elsewhere: ends the job stale in one
 * transaction (reads by id: the instance document), if it is still PENDING
 * and still not live when read inside it. Its handler is never run.
 */
export async function endStaleJob(
  db: Firestore,
  ref: Pick<JobState, 'id' | 'processInstanceId'>,
  now: Date,
): Promise<StaleJobEnd> {
  const run = await runUnitOfWork(db, async (uow): Promise<StaleJobEnd> => {
    const doc = await readInstanceDoc(uow, ref.processInstanceId);
    const found = doc === null ? null : await readJob(uow, doc, ref.id);
    if (doc === null || found === null) return 'NOT_FOUND';
    if (found.job.status !== 'PENDING') return 'ALREADY_FINISHED';
    if (!isStale(doc, found.job)) return 'LIVE';
    await endStale(uow, found.job, found.legacyPath, now);
    return 'STALE';
  });
  return run.result;
}
