import type { Firestore } from '@google-cloud/firestore';
import type { JobState } from '../state';
import { failJob } from '../transitions';
import { applyTransition, loadExecution, loadInstance } from './apply';
import { asJob, plain, refs } from './collections';
import { runUnitOfWork } from './unit-of-work';

/** Outcome of a failed job run: retry (Cloud Tasks tries again) or FAILED for good (incident). */
export type JobFailure = { readonly status: 'RETRY' | 'FAILED' | 'ALREADY_FINISHED' | 'NOT_FOUND'; readonly attempts: number };

/**
 * Counts a failed attempt; after `maxAttempts`, or at once when `final` (the
 * queue's last attempt, or a failure no retry heals), the job is FAILED and
 * its instance shows a JOB_FAILED incident, in this one transaction.
 */
export async function recordJobFailure(db: Firestore, jobIdValue: string, error: string, maxAttempts: number, now: Date, options: { readonly final?: boolean } = {}): Promise<JobFailure> {
  const run = await runUnitOfWork(db, async (uow): Promise<JobFailure> => {
    const jobData = await uow.get(refs.job(db, jobIdValue));
    if (jobData === undefined) return { status: 'NOT_FOUND', attempts: 0 };
    const job = asJob(jobData);
    if (job.status !== 'PENDING') return { status: 'ALREADY_FINISHED', attempts: job.attempts };
    const counted: JobState = { ...job, attempts: job.attempts + 1, lastError: error };
    if (counted.attempts < maxAttempts && options.final !== true) {
      uow.set(refs.job(db, job.id), plain(counted));
      return { status: 'RETRY', attempts: counted.attempts };
    }
    const instance = await loadInstance(uow, job.processInstanceId);
    const execution = await loadExecution(uow, job.executionId);
    if (instance === null || execution === null) {
      uow.set(refs.job(db, job.id), plain({ ...counted, status: 'FAILED', finishedAt: now }));
      return { status: 'FAILED', attempts: counted.attempts };
    }
    const t = failJob({ instance, execution, job: counted }, error, now);
    uow.set(refs.job(db, job.id), plain(t.job));
    await applyTransition(uow, t, now);
    return { status: 'FAILED', attempts: counted.attempts };
  });
  return run.result;
}
