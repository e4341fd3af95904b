import type { Request, Response } from '@google-cloud/functions-framework';
import type { Firestore } from '@google-cloud/firestore';
import { z } from 'zod';
import type { PushTokenVerifier } from '../auth/push-token';
import { BpmnError, classifyFailure, errorMessage, storableText } from '../core/errors';
import { throwJobError } from '../engine/store/job-error';
import type { Engine } from '../engine/engine';
import { completeJobRun } from '../engine/store/complete-job';
import { modelKeyOf } from '../bpmn/item-body';
import type { ProcessModel } from '../bpmn/model';
import { modelOutside } from '../engine/store/versions';
import { type JobFailure, recordJobFailure } from '../engine/store/record-job-failure';
import { endStaleJob } from '../engine/store/stale-job';
import type { JobState } from '../engine/state';
import { type Answer, answering, failureAnswer } from '../http/answer';
import { parseBody, refuseMethod, refuseToken } from '../http/request';
import type { Logger } from '../log';
import type { JobQueue } from '../tasks/job-queue';
import { annotateSpan } from '../trace/trace';
import { dispatchSettled, logDuplicates } from './dispatch';
import { inputsOver } from '../engine/expressions';
import type { AsyncHandler } from './handlers';
import { publishStepOf } from './publish-steps';
import { type JobDelivery, jobRefOf, loadPendingJob } from './load-job';

/** What runJob needs, passed in (tests build their own); runJobFunction (wiring.ts) builds it from the configuration. */
export interface RunJobDeps {
  /** The Firestore client, created on the first call (keeps the SDK out of the cold start). */
  readonly db: () => Firestore;
  /** The deployed models, loaded (the BPMN files parsed) on the first job, not at start-up. */
  readonly engine: () => Promise<Engine>;
  /** The jobs queue (INBOX_TASKS_QUEUE, tasks POSTed to runJob): the jobs a finished job creates go there after the commit. */
  readonly queue: () => JobQueue;
  /** The timers queue (INBOX_TIMERS_QUEUE, tasks POSTed to fireTimer): the timers a finished job's token sets go there after the commit. */
  readonly timerQueue: () => JobQueue;
  /**
   * The app's async handlers by task type or BPMN task id (jobs/handlers.ts), and the system's publishing steps by
   * process and element (jobs/publish-steps.ts); a job of a task without one fails for good (NO_HANDLER).
   */
  readonly handlers: () => Readonly<Record<string, AsyncHandler>> | Promise<Readonly<Record<string, AsyncHandler>>>;
  /**
   * The publishing steps of one version of a model (runtime.publishStepsOf): a job's publish is looked up in its
   * instance's own version. Absent: in `handlers` (the deployed models' only).
   */
  readonly publishStepsOf?: (model: ProcessModel) => Readonly<Record<string, AsyncHandler>>;
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

/**
 * The task body: `{ jobId, processInstanceId }` (the job lives in its
 * instance's document). A task created before that carries `{ jobId }` only:
 * its instance is then found through the job's old `jobs/{jobId}` document.
 */
const Body = z.object({
  jobId: z.string().regex(/^[0-9a-f]{40}$/, 'a job id (40 hex digits)'),
  processInstanceId: z
    .string()
    .regex(/^[0-9a-f]{40}$/, 'a process instance id (40 hex digits)')
    .optional(),
});

/** An error's text as it is logged and stored (lastError, the incident): bounded and storable whatever threw it. */
const message = (err: unknown): string => storableText(errorMessage(err));

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

/** One delivery of a job by Cloud Tasks: what every step of a run needs to know about it. */
interface Delivery extends JobDelivery {
  /** The queue's last attempt: Cloud Tasks drops the task after it, so any failure is recorded now. */
  readonly lastAttempt: boolean;
  /** The fields every log line of the run carries. */
  readonly context: { readonly jobId: string; readonly attempt: number | null; readonly queueMaxAttempts: number };
}

/**
 * `runJob`, the target of the Cloud Tasks queue: runs a job's handler, then
 * finishes the job and moves its token on in one transaction. The answer
 * steers Cloud Tasks: 2xx ends the task, 5xx makes it retry with the queue's
 * backoff (503 for a failure a retry can heal and for a counted handler
 * failure, 500 for a defect outside the handler, as everywhere:
 * http/answer.ts; no `Retry-After`, the queue's backoff is the schedule).
 * The job is FAILED (its instance INCIDENT / JOB_FAILED, an ERROR log, and
 * 200 so retries stop) after `maxAttempts` failed handler runs, on a failure
 * no retry heals (no handler for the job's task, or a handler that throws a
 * PermanentJobError), and on the queue's last attempt whatever failed: Cloud
 * Tasks drops the task after it, and a job left PENDING then would never run
 * again.
 */
export function createRunJobHandler(deps: RunJobDeps): (req: Request, res: Response) => Promise<void> {
  return answering((req) => answerDelivery(deps, req));
}

/** Method, token, body, then the run; what fails before the job is known is answered by its class. */
async function answerDelivery(deps: RunJobDeps, req: Request): Promise<Answer> {
  try {
    const refused = refuseMethod(req, 'use POST (Cloud Tasks)') ?? (await refuseToken(deps.verifier, req));
    if (refused !== null) return refused;
    const body = parseBody(req, Body);
    if (!body.ok) return body.answer;
    const { jobId } = body.value;
    const attempt = attemptOf(req.get('x-cloudtasks-taskretrycount'));
    const delivery: Delivery = {
      db: deps.db(),
      jobId,
      processInstanceId: body.value.processInstanceId ?? null,
      lastAttempt: attempt !== null && attempt >= deps.queueMaxAttempts,
      context: { jobId, attempt, queueMaxAttempts: deps.queueMaxAttempts },
    };
    return await run(deps, delivery);
  } catch (err) {
    // Fetching the token check's certificates, or creating the Firestore client: nothing about the job is known yet.
    const failure = classifyFailure(err);
    deps.log.log(failure.kind === 'retryable' ? 'WARNING' : 'ERROR', 'job delivery not read; Cloud Tasks will retry', {
      code: failure.code,
      error: message(err),
    });
    return failureAnswer(failure, 'run the job', null);
  }
}

/** Reads the job, runs its handler, records the outcome; every failure ends in {@link settleFailure} or {@link failedOutsideHandler}. */
async function run(deps: RunJobDeps, received: Delivery): Promise<Answer> {
  let delivery = received;
  try {
    const loaded = await loadPendingJob(delivery);
    if (loaded.kind === 'answered') return loaded.answer;
    const { job, instance } = loaded;
    delivery = { ...delivery, processInstanceId: job.processInstanceId };
    if (!loaded.live) return await endStale(deps, delivery, job);
    annotateSpan({
      'inbox.job.id': job.id,
      'inbox.job.activity': job.activityId,
      'inbox.process.instance': job.processInstanceId,
    });
    const handlers = await deps.handlers();
    // The task as the instance's own version draws it (its mappings and headers, and what it publishes); a process no
    // longer deployed at all still runs its handler, as before, without them.
    const engine = await deps.engine();
    const model =
      engine.deployed(instance.processKey) === null ? null : await modelOutside(delivery.db, engine, instance);
    const version = model === null ? null : engine.at(modelKeyOf(instance.processKey), instance.processVersion);
    const publishing = version === null || deps.publishStepsOf === undefined ? handlers : deps.publishStepsOf(version);
    // The system's publish of this process's element first (element ids repeat across models), then the app's
    // handler by task type (several tasks share a worker), then by the element's id (a task of the inbox namespace).
    const handler =
      publishStepOf(publishing, instance.processKey, job.activityId) ??
      (job.taskType === undefined ? undefined : handlers[job.taskType]) ??
      handlers[job.activityId];
    // No retry brings a handler this deployment lacks (e.g. a job of a task a new model removed).
    if (handler === undefined)
      return await settleFailure(
        deps,
        delivery,
        `no async handler registered for ${job.taskType === undefined ? job.activityId : `task type ${job.taskType}`}`,
        'NO_HANDLER',
        'PERMANENT',
      );
    const task = model?.nodes[job.activityId];
    // zeebe:ioMapping inputs: what the handler sees; a failed one no retry heals.
    const view = inputsOver(task?.io, instance.variables, job.activityId);
    if (!('values' in view)) return await settleFailure(deps, delivery, view.message, view.reason, 'PERMANENT');
    const headers = task !== undefined && 'job' in task ? (task.job.headers ?? {}) : {};
    let result: Readonly<Record<string, unknown>>;
    try {
      result = await handler({ job, instance: { ...instance, variables: view.values }, headers, now: deps.now() });
    } catch (err) {
      // A business error for the model to handle: caught by an error boundary event, or an incident; never retried.
      if (err instanceof BpmnError) return await finishWithError(deps, delivery, job, err);
      // A handler failure is counted against the job. The handler said no retry heals it (PermanentJobError):
      // end the job now rather than burn every retry.
      const failure = classifyFailure(err);
      const final: Final = failure.kind === 'permanent' ? 'PERMANENT' : delivery.lastAttempt ? 'LAST_ATTEMPT' : null;
      return await settleFailure(deps, delivery, message(err), failure.code, final);
    }
    return await finishJob(deps, delivery, job, result);
  } catch (err) {
    return await failedOutsideHandler(deps, delivery, err);
  }
}

/**
 * The job's token no longer waits for it (a repair moved or cancelled it, an
 * interrupting timer took it on): the job ends stale in one transaction and
 * its handler is never run; 200, so Cloud Tasks ends the task.
 */
async function endStale(deps: RunJobDeps, delivery: Delivery, job: JobState): Promise<Answer> {
  const ended = await endStaleJob(delivery.db, job, deps.now());
  // Read again in the transaction, the token does wait for it (a read of an old-layout instance raced its move-in): run it on the retry.
  if (ended === 'LIVE')
    return {
      kind: 'retry',
      code: 'JOB_LIVE',
      error: 'the job looked stale but its token waits for it: Cloud Tasks will retry',
      retryAfterSeconds: null,
    };
  deps.log.info('job stale: its token no longer waits for it; ended without running its handler', {
    ...delivery.context,
    activityId: job.activityId,
    executionId: job.executionId,
    outcome: ended,
  });
  return { kind: 'ok', body: { outcome: ended.toLowerCase().replace('_', ' '), jobId: job.id } };
}

/** Finishes the job with the handler's result and moves the token on (one transaction), then dispatches the next jobs. */
async function finishJob(
  deps: RunJobDeps,
  { db, jobId }: Delivery,
  job: JobState,
  result: Readonly<Record<string, unknown>>,
): Promise<Answer> {
  const engine = await deps.engine();
  const done = await completeJobRun(db, engine, job, result, deps.now());
  logDuplicates(deps.log, done.duplicates);
  await dispatchSettled({ jobs: deps.queue(), timers: deps.timerQueue() }, done, deps.log);
  deps.log.info('job finished', {
    jobId,
    activityId: job.activityId,
    outcome: done.status,
    nextJobs: done.jobs.length,
    nextTimers: done.timers.length,
  });
  return { kind: 'ok', body: { outcome: done.status.toLowerCase(), jobId } };
}

/** The handler threw a BpmnError: the job ends, the error is caught or an incident (one transaction); then the next jobs go out. */
async function finishWithError(
  deps: RunJobDeps,
  { db, jobId }: Delivery,
  job: JobState,
  err: BpmnError,
): Promise<Answer> {
  const engine = await deps.engine();
  const done = await throwJobError(db, engine, job, { code: err.code, message: err.message }, deps.now());
  logDuplicates(deps.log, done.duplicates);
  await dispatchSettled({ jobs: deps.queue(), timers: deps.timerQueue() }, done, deps.log);
  const fields = { jobId, activityId: job.activityId, errorCode: err.code, outcome: done.status };
  if (done.status === 'UNCAUGHT') deps.log.error('job threw a BPMN error that nothing catches: incident', fields);
  else deps.log.info('job threw a BPMN error', fields);
  return { kind: 'ok', body: { outcome: done.status.toLowerCase(), jobId, errorCode: err.code } };
}

/**
 * A failure outside the handler (reading, loading the engine, committing):
 * not the step's fault, so not counted against the job, and the retry re-runs
 * the (idempotent) handler. On the queue's last attempt it is recorded now,
 * or the job would stay PENDING for good. A step the engine cannot apply
 * (StepFailedError) is no such failure: the job is FAILED at once.
 */
async function failedOutsideHandler(deps: RunJobDeps, delivery: Delivery, err: unknown): Promise<Answer> {
  const failure = classifyFailure(err);
  // The engine cannot apply the job's outcome (its step threw, or needs more than one transaction): running the
  // handler again would only end the same way, so the job ends FAILED now, its incident saying why.
  if (failure.kind === 'step') return settleFailure(deps, delivery, message(err), failure.code, 'PERMANENT');
  if (delivery.lastAttempt) return settleFailure(deps, delivery, message(err), failure.code, 'LAST_ATTEMPT');
  if (failure.kind === 'retryable') {
    deps.log.warn('job run failed before it could finish; Cloud Tasks will retry', {
      ...delivery.context,
      code: failure.code,
      error: message(err),
    });
  } else {
    deps.log.error('job run failed unexpectedly before it could finish; Cloud Tasks will retry', {
      ...delivery.context,
      code: failure.code,
      error: message(err),
    });
  }
  return failureAnswer(failure, 'run the job', null);
}

/** Counts the failure (or ends the job when `final`) and answers: 200 once FAILED, 503 to retry. */
async function settleFailure(
  deps: RunJobDeps,
  delivery: Delivery,
  error: string,
  code: string,
  final: Final,
): Promise<Answer> {
  const { db, jobId, context } = delivery;
  let counted: JobFailure;
  try {
    const ref = await jobRefOf(delivery);
    counted =
      ref === null
        ? { status: 'NOT_FOUND', attempts: 0 }
        : await recordJobFailure(db, ref, error, deps.maxAttempts, deps.now(), { final: final !== null });
  } catch (recordErr) {
    if (final !== null) {
      // The task ends here (last attempt) or would fail forever: the job stays PENDING; sweepJobs reports it at ERROR.
      deps.log.error('job failed and the failure could not be recorded: the job stays PENDING', {
        incident: 'JOB_FAILED',
        ...context,
        final,
        error,
        recordError: message(recordErr),
      });
    } else {
      deps.log.warn('job failed and the failure could not be counted; Cloud Tasks will retry', {
        ...context,
        error,
        recordError: message(recordErr),
      });
    }
    return failureAnswer(classifyFailure(recordErr), 'record the job failure', null);
  }
  if (counted.status === 'FAILED') {
    deps.log.error('job failed for good: instance marked INCIDENT', {
      incident: 'JOB_FAILED',
      ...context,
      final: final ?? 'ATTEMPTS_EXHAUSTED',
      attempts: counted.attempts,
      error,
    });
    return { kind: 'ok', body: { outcome: 'failed', jobId, attempts: counted.attempts } };
  }
  if (counted.status === 'STALE') {
    deps.log.info('job failed after its token moved on: ended stale, the token untouched', {
      ...context,
      attempts: counted.attempts,
      code,
      error,
    });
    return { kind: 'ok', body: { outcome: 'stale', jobId } };
  }
  // Finished meanwhile (a concurrent delivery) or gone: nothing left to retry.
  if (counted.status !== 'RETRY')
    return { kind: 'ok', body: { outcome: counted.status.toLowerCase().replace('_', ' '), jobId } };
  deps.log.warn('job handler failed; Cloud Tasks will retry', { ...context, attempts: counted.attempts, code, error });
  // The job's own retry, counted: the queue's backoff spaces the attempts.
  return { kind: 'retry', code, error: 'job handler failed', retryAfterSeconds: null };
}
