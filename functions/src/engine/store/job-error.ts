import { computeStep } from '../../core/errors';
import type { Firestore } from '@google-cloud/firestore';
import type { Engine } from '../engine';
import { jobThrewError } from '../transitions';
import { applyAndSettle, NOTHING_SETTLED, type Settled } from './apply';
import type { JobRef } from './complete-job';
import { readInstanceDoc, readJob, writeJobOf } from './instance-doc';
import { endStale, isStale } from './stale-job';
import { runUnitOfWork } from './unit-of-work';
import { modelOf } from './versions';

/** What a handler's BPMN error did: CAUGHT moved the token to the boundary event; UNCAUGHT failed the job (incident). */
export type JobErrorOutcome = Settled & {
  readonly status: 'CAUGHT' | 'UNCAUGHT' | 'ALREADY_FINISHED' | 'NOT_FOUND' | 'STALE';
};

/**
 * A job's handler threw a BpmnError: in one transaction (one read of the
 * instance document, then what the move touches), the job ends and the
 * error is caught by the nearest matching error boundary event, or the job
 * is FAILED with an UNCAUGHT_ERROR incident. A job already finished, or
 * whose token left it, changes nothing (as for a completion).
 */
export async function throwJobError(
  db: Firestore,
  engine: Engine,
  ref: JobRef,
  error: { readonly code: string; readonly message: string },
  now: Date,
): Promise<JobErrorOutcome> {
  const run = await runUnitOfWork(db, async (uow): Promise<JobErrorOutcome> => {
    const doc = await readInstanceDoc(uow, ref.processInstanceId);
    const found = doc === null ? null : await readJob(uow, doc, ref.id);
    if (doc === null || found === null) return { ...NOTHING_SETTLED, status: 'NOT_FOUND' };
    const { job, legacyPath } = found;
    if (job.status !== 'PENDING') return { ...NOTHING_SETTLED, status: 'ALREADY_FINISHED' };
    const execution = doc.tokens[job.executionId];
    if (execution === undefined || isStale(doc, job)) {
      await endStale(uow, job, legacyPath, now);
      return { ...NOTHING_SETTLED, status: 'STALE' };
    }
    const model = await modelOf(uow, engine, doc.instance);
    const t = computeStep(`BPMN error ${error.code} of job ${job.id} at ${job.activityId}`, () =>
      jobThrewError(
        model,
        engine.sync,
        { instance: doc.instance, execution, job, tokens: doc.tokens },
        error.code,
        error.message,
        now,
      ),
    );
    await writeJobOf(uow, t.job, legacyPath);
    return { ...(await applyAndSettle(uow, engine, t, now)), status: t.caught ? 'CAUGHT' : 'UNCAUGHT' };
  });
  return run.result;
}
