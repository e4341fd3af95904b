import type { Request, Response } from '@google-cloud/functions-framework';
import type { Firestore } from '@google-cloud/firestore';
import { z } from 'zod';
import type { PushTokenVerifier } from '../auth/push-token';
import { classifyFailure } from '../core/errors';
import type { Engine } from '../engine/engine';
import { asInstance, asJob, refs } from '../engine/store/collections';
import { completeJobRun, recordJobFailure } from '../engine/store/operations';
import { toDates } from '../engine/store/unit-of-work';
import type { Logger } from '../log';
import type { JobQueue } from '../tasks/job-queue';
import { dispatchJobs, logDuplicates } from './dispatch';
import type { AsyncHandler } from './handlers';

export interface RunJobDeps {
  readonly db: () => Firestore;
  readonly engine: () => Promise<Engine>;
  readonly queue: () => JobQueue;
  readonly handlers: () => Readonly<Record<string, AsyncHandler>>;
  readonly verifier: (() => Promise<PushTokenVerifier>) | null;
  readonly log: Logger;
  readonly now: () => Date;
  readonly maxAttempts: number;
}

const Body = z.object({ jobId: z.string().regex(/^[0-9a-f]{40}$/, 'a job id (40 hex digits)') });

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * `runJob`, the target of the Cloud Tasks queue: runs a job's handler, then
 * finishes the job and moves its token on in one transaction. The answer
 * steers Cloud Tasks: 2xx ends the task, 5xx makes it retry with the queue's
 * backoff. After `maxAttempts` failed runs the job is FAILED, its instance
 * shows a JOB_FAILED incident, and the answer is 200 so retries stop.
 */
export function createRunJobHandler(deps: RunJobDeps): (req: Request, res: Response) => Promise<void> {
  return async (req, res) => {
    if (req.method !== 'POST') {
      res.status(405).json({ error: 'use POST (Cloud Tasks)' });
      return;
    }
    if (deps.verifier !== null) {
      const auth = await (await deps.verifier())(req.get('authorization'));
      if (!auth.ok) {
        res.status(auth.status).json({ error: auth.error });
        return;
      }
    }
    const body = Body.safeParse(req.body);
    if (!body.success) {
      res.status(400).json({ error: z.prettifyError(body.error) });
      return;
    }
    const { jobId } = body.data;
    const db = deps.db();
    let inHandler = false;
    try {
      const jobSnap = await refs.job(db, jobId).get();
      if (!jobSnap.exists) {
        res.status(200).json({ outcome: 'not found', jobId });
        return;
      }
      const job = asJob(toDates(jobSnap.data()) as Record<string, unknown>);
      if (job.status !== 'PENDING') {
        res.status(200).json({ outcome: 'already finished', jobId, status: job.status });
        return;
      }
      const instanceSnap = await refs.instance(db, job.processInstanceId).get();
      const instance = asInstance(toDates(instanceSnap.data() ?? {}) as Record<string, unknown>);
      const handler = deps.handlers()[job.activityId];
      if (handler === undefined) throw new Error(`no async handler registered for ${job.activityId}`);

      inHandler = true;
      const result = await handler({ job, instance, now: deps.now() });
      inHandler = false;

      const engine = await deps.engine();
      const done = await completeJobRun(db, engine, jobId, result, deps.now());
      logDuplicates(deps.log, done.duplicates);
      await dispatchJobs(deps.queue(), done.jobs, deps.log);
      deps.log.info('job finished', { jobId, activityId: job.activityId, outcome: done.status, nextJobs: done.jobs.length });
      res.status(200).json({ outcome: done.status.toLowerCase(), jobId });
    } catch (err) {
      const failure = classifyFailure(err);
      if (!inHandler) {
        // Reading or committing failed: nothing was finished; the retry re-runs the (idempotent) handler.
        deps.log.warn('job run failed before it could finish; Cloud Tasks will retry', { jobId, code: failure.code, error: message(err) });
        res.status(503).json({ error: 'temporarily unable to run the job', retry: true });
        return;
      }
      const counted = await recordJobFailure(db, jobId, message(err), deps.maxAttempts, deps.now()).catch(() => null);
      if (counted?.status === 'FAILED') {
        deps.log.error('job failed for good: instance marked INCIDENT', { incident: 'JOB_FAILED', jobId, attempts: counted.attempts, error: message(err) });
        res.status(200).json({ outcome: 'failed', jobId, attempts: counted.attempts });
        return;
      }
      deps.log.warn('job handler failed; Cloud Tasks will retry', { jobId, attempts: counted?.attempts ?? null, code: failure.code, error: message(err) });
      res.status(503).json({ error: 'job handler failed', retry: true });
    }
  };
}
