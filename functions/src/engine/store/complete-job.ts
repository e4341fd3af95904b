import type { Firestore } from '@google-cloud/firestore';
import type { Engine } from '../engine';
import { completeJob } from '../transitions';
import { applyAndSettle, loadExecution, loadInstance, NOTHING_SETTLED, type Settled } from './apply';
import { asJob, plain, refs } from './collections';
import { runUnitOfWork } from './unit-of-work';

/**
 * `lastError` of a job ended DONE without moving anything: a repair had moved
 * or cancelled its token. DONE (not FAILED): nothing is left to do or repair.
 * Documented in docs/data-model.md (jobs).
 */
export const STALE_JOB_ERROR = 'token no longer waits for this job';

/** Outcome of finishing a job. */
export type JobCompletion = Settled & { readonly status: 'COMPLETED' | 'ALREADY_FINISHED' | 'NOT_FOUND' | 'STALE' };

/**
 * Marks a job DONE and moves its token on, in one transaction. A job already
 * DONE or FAILED, or whose token no longer waits for it (moved by a repair),
 * changes nothing: a duplicate Cloud Tasks delivery is harmless.
 */
export async function completeJobRun(db: Firestore, engine: Engine, jobIdValue: string, result: Readonly<Record<string, unknown>>, now: Date): Promise<JobCompletion> {
  const run = await runUnitOfWork(db, async (uow): Promise<JobCompletion> => {
    const jobData = await uow.get(refs.job(db, jobIdValue));
    if (jobData === undefined) return { ...NOTHING_SETTLED, status: 'NOT_FOUND' };
    const job = asJob(jobData);
    if (job.status !== 'PENDING') return { ...NOTHING_SETTLED, status: 'ALREADY_FINISHED' };
    const instance = await loadInstance(uow, job.processInstanceId);
    const execution = await loadExecution(uow, job.executionId);
    if (instance === null || execution === null || execution.status !== 'WAITING_JOB' || execution.jobId !== job.id) {
      uow.set(refs.job(db, job.id), plain({ ...job, status: 'DONE', finishedAt: now, lastError: STALE_JOB_ERROR }));
      return { ...NOTHING_SETTLED, status: 'STALE' };
    }
    const t = completeJob(engine.model(instance.processKey), engine.sync, { instance, execution, job }, result, now);
    uow.set(refs.job(db, job.id), plain(t.job));
    return { ...(await applyAndSettle(uow, engine, t, now)), status: 'COMPLETED' };
  });
  return run.result;
}
