import { computeStep } from '../../core/errors';
import type { Firestore } from '@google-cloud/firestore';
import type { Engine } from '../engine';
import type { JobState } from '../state';
import { completeJob } from '../transitions';
import { applyAndSettle, NOTHING_SETTLED, type Settled } from './apply';
import { readInstanceDoc, readJob, writeJobOf } from './instance-doc';
import { endStale, isStale } from './stale-job';
import { runUnitOfWork, type UnitStats } from './unit-of-work';
import { modelOf } from './versions';

/** Outcome of finishing a job. */
export type JobCompletion = Settled & { readonly status: 'COMPLETED' | 'ALREADY_FINISHED' | 'NOT_FOUND' | 'STALE' };

/** Which job: its id and its instance (a job lives in its instance's document, so both are needed to find it). */
export type JobRef = Pick<JobState, 'id' | 'processInstanceId'>;

/**
 * Marks a job DONE and moves its token on, in one transaction. A job already
 * DONE or FAILED changes nothing (a duplicate Cloud Tasks delivery is
 * harmless); one whose token no longer waits for it (moved by a repair or a
 * timer) ends stale (stale-job.ts) and moves nothing.
 */
export async function completeJobRun(
  db: Firestore,
  engine: Engine,
  ref: JobRef,
  result: Readonly<Record<string, unknown>>,
  now: Date,
): Promise<JobCompletion> {
  return (await completeJobCounted(db, engine, ref, result, now)).result;
}

/**
 * {@link completeJobRun} with the transaction's read and write counts. Reads
 * by id: the instance document (tokens and jobs in it), then what the
 * transition touches (the key document of a new waiting point).
 */
export async function completeJobCounted(
  db: Firestore,
  engine: Engine,
  ref: JobRef,
  result: Readonly<Record<string, unknown>>,
  now: Date,
): Promise<{ result: JobCompletion; stats: UnitStats }> {
  return runUnitOfWork(db, async (uow): Promise<JobCompletion> => {
    const doc = await readInstanceDoc(uow, ref.processInstanceId);
    const found = doc === null ? null : await readJob(uow, doc, ref.id);
    if (doc === null || found === null) return { ...NOTHING_SETTLED, status: 'NOT_FOUND' };
    const { job, legacyPath } = found;
    if (job.status !== 'PENDING') return { ...NOTHING_SETTLED, status: 'ALREADY_FINISHED' };
    const { instance } = doc;
    const execution = doc.tokens[job.executionId];
    if (execution === undefined || isStale(doc, job)) {
      await endStale(uow, job, legacyPath, now);
      return { ...NOTHING_SETTLED, status: 'STALE' };
    }
    const model = await modelOf(uow, engine, instance);
    const t = computeStep(`completing job ${job.id} at ${job.activityId}`, () =>
      completeJob(model, engine.sync, { instance, execution, job, tokens: doc.tokens }, result, now),
    );
    await writeJobOf(uow, t.job, legacyPath);
    return { ...(await applyAndSettle(uow, engine, t, now)), status: 'COMPLETED' };
  });
}
