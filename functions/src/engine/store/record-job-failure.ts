import type { Firestore } from '@google-cloud/firestore';
import type { JobState } from '../state';
import { failJob } from '../transitions';
import { applyTransition } from './apply';
import type { JobRef } from './complete-job';
import { readInstanceDoc, readJob, writeJobOf } from './instance-doc';
import { endStale, isStale } from './stale-job';
import { runUnitOfWork } from './unit-of-work';

/**
 * Outcome of a failed job run: retry (Cloud Tasks tries again), FAILED for
 * good (incident), or STALE: its token no longer waits for it, so the job
 * ended without touching the token (stale-job.ts).
 */
export type JobFailure = {
  readonly status: 'RETRY' | 'FAILED' | 'STALE' | 'ALREADY_FINISHED' | 'NOT_FOUND';
  readonly attempts: number;
};

/**
 * Counts a failed attempt; after `maxAttempts`, or at once when `final` (the
 * queue's last attempt, or a failure no retry heals), the job is FAILED and
 * its instance shows a JOB_FAILED incident, in this one transaction (one
 * read and one write: the instance document holds the job and its token).
 * A job whose token has moved on (a repair, an interrupting timer) or is
 * gone ends stale instead: its failure never drags the token back.
 */
export async function recordJobFailure(
  db: Firestore,
  ref: JobRef,
  error: string,
  maxAttempts: number,
  now: Date,
  options: { readonly final?: boolean } = {},
): Promise<JobFailure> {
  const run = await runUnitOfWork(db, async (uow): Promise<JobFailure> => {
    const doc = await readInstanceDoc(uow, ref.processInstanceId);
    const found = doc === null ? null : await readJob(uow, doc, ref.id);
    if (doc === null || found === null) return { status: 'NOT_FOUND', attempts: 0 };
    const { job, legacyPath } = found;
    if (job.status !== 'PENDING') return { status: 'ALREADY_FINISHED', attempts: job.attempts };
    const counted: JobState = { ...job, attempts: job.attempts + 1, lastError: error };
    const execution = doc.tokens[job.executionId];
    if (execution === undefined || isStale(doc, job)) {
      await endStale(uow, counted, legacyPath, now);
      return { status: 'STALE', attempts: counted.attempts };
    }
    // A task definition's retries bound its own job; every other job has the system's bound.
    if (counted.attempts < (job.maxAttempts ?? maxAttempts) && options.final !== true) {
      await writeJobOf(uow, counted, legacyPath);
      return { status: 'RETRY', attempts: counted.attempts };
    }
    const t = failJob({ instance: doc.instance, execution, job: counted, tokens: doc.tokens }, error, now);
    await writeJobOf(uow, t.job, legacyPath);
    await applyTransition(uow, t, now);
    return { status: 'FAILED', attempts: counted.attempts };
  });
  return run.result;
}
