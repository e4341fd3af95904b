import type { Request, Response } from '@google-cloud/functions-framework';
import type { Firestore } from '@google-cloud/firestore';
import { z } from 'zod';
import type { PushTokenVerifier } from '../auth/push-token';
import { classifyFailure, storableText } from '../core/errors';
import type { Engine } from '../engine/engine';
import { asInstance, asJob, refs } from '../engine/store/collections';
import { completeJobRun, type JobFailure, recordJobFailure } from '../engine/store/operations';
import { toDates } from '../engine/store/unit-of-work';
import type { Logger } from '../log';
import type { JobQueue } from '../tasks/job-queue';
import { dispatchJobs, logDuplicates } from './dispatch';
import type { AsyncHandler } from './handlers';

/** What runJob needs, passed in (tests build their own); runJobFunction (wiring.ts) builds it from the configuration. */
export interface RunJobDeps {
  /** The Firestore client, created on the first call (keeps the SDK out of the cold start). */
  readonly db: () => Firestore;
  /** The deployed models, loaded (the BPMN files parsed) on the first job, not at start-up. */
  readonly engine: () => Promise<Engine>;
  /** The jobs queue (INBOX_TASKS_QUEUE, tasks POSTed to runJob): the jobs a finished job creates go there after the commit. */
  readonly queue: () => JobQueue;
  /** The async handlers by BPMN task id (jobs/handlers.ts); a job of a task without one fails for good (NO_HANDLER). */
  readonly handlers: () => Readonly<Record<string, AsyncHandler>>;
  /**
   * Checks the OIDC token Cloud Tasks signs for the runJob URL as
   * INBOX_TASKS_SERVICE_ACCOUNT, the only signer it accepts. null when
   * INBOX_PUSH_AUTH=disabled or no tasks service account is set: the local
   * Cloud Tasks emulator signs no token.
   */
  readonly verifier: (() => Promise<PushTokenVerifier>) | null;
  /** JSON lines on stdout for Cloud Logging, tagged with the function; the log-based metrics and alerts read their fields. */
  readonly log: Logger;
  /** The clock the handler gets and the job's finishedAt is stamped with. */
  readonly now: () => Date;
  /** Failed handler runs before the job is FAILED (INBOX_JOB_MAX_ATTEMPTS, default 10; below queueMaxAttempts). */
  readonly maxAttempts: number;
  /** The queue's retryConfig.maxAttempts (INBOX_JOBS_QUEUE_MAX_ATTEMPTS, default 20): its last attempt records any failure. */
  readonly queueMaxAttempts: number;
}

const Body = z.object({ jobId: z.string().regex(/^[0-9a-f]{40}$/, 'a job id (40 hex digits)') });

/** An error's text as it is logged and stored (lastError, the incident): bounded and storable whatever threw it. */
const message = (err: unknown): string => storableText(err instanceof Error ? err.message : String(err));

/**
 * Cloud Tasks' 1-based number of this attempt: X-CloudTasks-TaskRetryCount
 * ("0 on the first attempt, includes attempts that failed with 5xx") + 1.
 * Null without the header (a caller that is not Cloud Tasks): never the last.
 */
export function attemptOf(retryCountHeader: string | undefined): number | null {
  if (retryCountHeader === undefined || !/^\d{1,9}$/.test(retryCountHeader.trim())) return null;
  return Number(retryCountHeader.trim()) + 1;
}

/** Why a failure ends the job now rather than after more retries. */
type Final = null | 'LAST_ATTEMPT' | 'PERMANENT';

/**
 * `runJob`, the target of the Cloud Tasks queue: runs a job's handler, then
 * finishes the job and moves its token on in one transaction. The answer
 * steers Cloud Tasks: 2xx ends the task, 5xx makes it retry with the queue's
 * backoff. The job is FAILED (its instance INCIDENT / JOB_FAILED, an ERROR
 * log, and 200 so retries stop) after `maxAttempts` failed handler runs, on
 * a failure no retry heals (no handler for the job's task, or a handler
 * that throws a PermanentJobError), and on the
 * queue's last attempt whatever failed: Cloud Tasks drops the task after it,
 * and a job left PENDING then would never run again.
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
    const attempt = attemptOf(req.get('x-cloudtasks-taskretrycount'));
    const lastAttempt = attempt !== null && attempt >= deps.queueMaxAttempts;
    const context = { jobId, attempt, queueMaxAttempts: deps.queueMaxAttempts };

    /** Counts the failure (or ends the job when `final`) and answers: 200 once FAILED, 503 to retry. */
    const settleFailure = async (error: string, code: string, final: Final): Promise<void> => {
      let counted: JobFailure;
      try {
        counted = await recordJobFailure(db, jobId, error, deps.maxAttempts, deps.now(), { final: final !== null });
      } catch (recordErr) {
        if (final !== null) {
          // The task ends here (last attempt) or would fail forever: the job stays PENDING; sweepJobs reports it at ERROR.
          deps.log.error('job failed and the failure could not be recorded: the job stays PENDING', { incident: 'JOB_FAILED', ...context, final, error, recordError: message(recordErr) });
        } else {
          deps.log.warn('job failed and the failure could not be counted; Cloud Tasks will retry', { ...context, error, recordError: message(recordErr) });
        }
        res.status(503).json({ error: 'job failed', retry: true });
        return;
      }
      if (counted.status === 'FAILED') {
        deps.log.error('job failed for good: instance marked INCIDENT', { incident: 'JOB_FAILED', ...context, final: final ?? 'ATTEMPTS_EXHAUSTED', attempts: counted.attempts, error });
        res.status(200).json({ outcome: 'failed', jobId, attempts: counted.attempts });
        return;
      }
      if (counted.status !== 'RETRY') {
        // Finished meanwhile (a concurrent delivery) or gone: nothing left to retry.
        res.status(200).json({ outcome: counted.status.toLowerCase().replace('_', ' '), jobId });
        return;
      }
      deps.log.warn('job handler failed; Cloud Tasks will retry', { ...context, attempts: counted.attempts, code, error });
      res.status(503).json({ error: 'job handler failed', retry: true });
    };

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
      if (handler === undefined) {
        // No retry brings a handler this deployment lacks (e.g. a job of a task a new model removed).
        await settleFailure(`no async handler registered for ${job.activityId}`, 'NO_HANDLER', 'PERMANENT');
        return;
      }

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
      // A handler failure is counted against the job. Any failure on the queue's last attempt (reading,
      // loading the engine, committing) is recorded now, or the job would stay PENDING for good.
      if (inHandler || lastAttempt) {
        // The handler said no retry heals it (PermanentJobError): end the job now rather than burn every retry.
        const final: Final = inHandler && failure.kind === 'permanent' ? 'PERMANENT' : lastAttempt ? 'LAST_ATTEMPT' : null;
        await settleFailure(message(err), failure.code, final);
        return;
      }
      // Not the step's fault (Firestore, the engine): not counted against the job; the retry re-runs the (idempotent) handler.
      deps.log.warn('job run failed before it could finish; Cloud Tasks will retry', { ...context, code: failure.code, error: message(err) });
      res.status(503).json({ error: 'temporarily unable to run the job', retry: true });
    }
  };
}
