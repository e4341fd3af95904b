import type { Firestore } from '@google-cloud/firestore';
import type { Engine } from '../engine';
import { executionId as newExecutionId, instanceId as newInstanceId } from '../ids';
import type { ExecutionState, InstanceState, JobState, Transition } from '../state';
import { cancelToken, completeJob, failJob, placeToken, startInstance } from '../transitions';
import { applyAndSettle, applyTransition, type DuplicateWaitingPoint, loadInstance, type Settled } from './apply';
import { asCorrelationKey, asExecution, asJob, plain, refs } from './collections';
import { appliedRepair, newRequestId, type RepairKind, type RepairRecord, runRepair, withRepair } from './repair-request';
import { runUnitOfWork, type UnitOfWork } from './unit-of-work';

/**
 * One Firestore transaction per state change. Each operation returns the new
 * jobs (dispatch them after the commit: the transaction may run several
 * times, Cloud Tasks must be called once) and any duplicate waiting points
 * (log them as errors).
 */
export type Changed = Settled;

const NOTHING: Changed = { jobs: [], duplicates: [], consumed: [] };

async function loadExecution(uow: UnitOfWork, id: string): Promise<ExecutionState | null> {
  const data = await uow.get(refs.execution(uow.db, id));
  return data === undefined ? null : asExecution(data);
}

export interface StartRequest {
  readonly processKey: string;
  readonly businessKey: string;
  readonly variables: Readonly<Record<string, unknown>>;
  readonly now: Date;
  /** Chosen once per start request; see {@link InstanceState.startRequestId}. */
  readonly requestId?: string;
}

/** Starts an instance, idempotent by (process key, business key): a second start returns the first. */
export async function startProcessInstance(db: Firestore, engine: Engine, request: StartRequest): Promise<Changed & { created: boolean; instance: InstanceState }> {
  const model = engine.model(request.processKey);
  const id = newInstanceId(request.processKey, request.businessKey);
  const start = (now: Date) => startInstance(model, engine.sync, { instanceId: id, executionId: newExecutionId(id, 'start'), businessKey: request.businessKey, variables: request.variables, now });
  const { result } = await runUnitOfWork(db, async (uow) => {
    const existing = await loadInstance(uow, id);
    if (existing !== null) {
      // This very request created it (its commit landed, the answer was lost): the same start, the same jobs (ids are
      // deterministic), so the caller answers 201 and dispatches them (a task that exists already is a no-op).
      if (request.requestId !== undefined && existing.startRequestId === request.requestId) return { ...NOTHING, jobs: start(existing.createdAt).jobs, created: true, instance: existing };
      return { ...NOTHING, created: false, instance: existing };
    }
    const t = start(request.now);
    const tagged = request.requestId === undefined ? t : { ...t, instance: { ...t.instance, startRequestId: request.requestId } };
    return { ...(await applyAndSettle(uow, engine, tagged, request.now)), created: true, instance: tagged.instance };
  });
  return result;
}

/**
 * `lastError` of a job ended DONE without moving anything: a repair had moved
 * or cancelled its token. DONE (not FAILED): nothing is left to do or repair.
 * Documented in docs/data-model.md (jobs).
 */
export const STALE_JOB_ERROR = 'token no longer waits for this job';

/** Outcome of finishing a job. */
export type JobCompletion = Changed & { readonly status: 'COMPLETED' | 'ALREADY_FINISHED' | 'NOT_FOUND' | 'STALE' };

/**
 * Marks a job DONE and moves its token on, in one transaction. A job already
 * DONE or FAILED, or whose token no longer waits for it (moved by a repair),
 * changes nothing: a duplicate Cloud Tasks delivery is harmless.
 */
export async function completeJobRun(db: Firestore, engine: Engine, jobIdValue: string, result: Readonly<Record<string, unknown>>, now: Date): Promise<JobCompletion> {
  const run = await runUnitOfWork(db, async (uow): Promise<JobCompletion> => {
    const jobData = await uow.get(refs.job(db, jobIdValue));
    if (jobData === undefined) return { ...NOTHING, status: 'NOT_FOUND' };
    const job = asJob(jobData);
    if (job.status !== 'PENDING') return { ...NOTHING, status: 'ALREADY_FINISHED' };
    const instance = await loadInstance(uow, job.processInstanceId);
    const execution = await loadExecution(uow, job.executionId);
    if (instance === null || execution === null || execution.status !== 'WAITING_JOB' || execution.jobId !== job.id) {
      uow.set(refs.job(db, job.id), plain({ ...job, status: 'DONE', finishedAt: now, lastError: STALE_JOB_ERROR }));
      return { ...NOTHING, status: 'STALE' };
    }
    const t = completeJob(engine.model(instance.processKey), engine.sync, { instance, execution, job }, result, now);
    uow.set(refs.job(db, job.id), plain(t.job));
    return { ...(await applyAndSettle(uow, engine, t, now)), status: 'COMPLETED' };
  });
  return run.result;
}

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

/** A repair would create a second waiting point for a key; refused unless forced. */
export class RepairRefusedError extends Error {
  override readonly name = 'RepairRefusedError';
}

export interface MoveTokenRequest {
  readonly processInstanceId: string;
  /** The token to move; null creates a new token (the article's "change state" that adds one). */
  readonly executionId: string | null;
  readonly activityId: string;
  /** Allow a duplicate waiting point (it is still recorded as an incident). */
  readonly force: boolean;
  readonly now: Date;
  /** Chosen once per command run (repair-request.ts); default: a new one per call. */
  readonly requestId?: string;
}

/** What a repair of tokens did; `alreadyApplied`: found done by an earlier attempt of the same request. */
export type Repaired = Changed & { readonly alreadyApplied: boolean };

/**
 * Records a token repair on its instance, after everything else of the unit
 * of work (the instance as the unit holds it now, buffered deliveries
 * included), with what a re-run must report: the token, the new jobs (so the
 * caller still dispatches them), consumed messages and duplicates.
 */
async function recordOnInstance(uow: UnitOfWork, instanceId: string, kind: RepairKind, requestId: string, executionId: string, changed: Changed, now: Date): Promise<void> {
  const instance = await loadInstance(uow, instanceId);
  if (instance === null) return;
  const record: RepairRecord = { requestId, kind, at: now, details: { executionId, jobIds: changed.jobs.map((j) => j.id), consumed: changed.consumed, duplicates: changed.duplicates } };
  uow.set(refs.instance(uow.db, instanceId), plain(withRepair(instance, record)));
}

/** What an applied repair did, re-read for a re-run: its jobs that are still PENDING (dispatching one twice is harmless). */
async function changedBy(uow: UnitOfWork, record: RepairRecord): Promise<Repaired> {
  const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);
  const jobs: JobState[] = [];
  for (const id of strings(record.details.jobIds)) {
    const data = await uow.get(refs.job(uow.db, id));
    if (data !== undefined && asJob(data).status === 'PENDING') jobs.push(asJob(data));
  }
  const duplicates = Array.isArray(record.details.duplicates) ? (record.details.duplicates as DuplicateWaitingPoint[]) : [];
  return { jobs, duplicates, consumed: strings(record.details.consumed), alreadyApplied: true };
}

/**
 * Repair: move (or add) a token to an activity and run it, guarded against
 * double tokens. Idempotent per request id: a new token's id derives from
 * it, and a re-run that finds the request recorded on the instance reports
 * the first attempt's token and jobs instead of moving anything again.
 */
export async function moveToken(db: Firestore, engine: Engine, request: MoveTokenRequest): Promise<Repaired & { executionId: string }> {
  const requestId = request.requestId ?? newRequestId();
  return runRepair(db, async (uow) => {
    const instance = await loadInstance(uow, request.processInstanceId);
    if (instance === null) throw new RepairRefusedError(`process instance ${request.processInstanceId} does not exist`);
    const applied = appliedRepair(instance, requestId);
    if (applied !== null) return { ...(await changedBy(uow, applied)), executionId: String(applied.details.executionId) };
    let execution = request.executionId === null ? null : await loadExecution(uow, request.executionId);
    if (request.executionId !== null && (execution === null || execution.processInstanceId !== instance.id)) {
      throw new RepairRefusedError(`execution ${request.executionId} is not a token of ${instance.id}`);
    }
    if (execution === null) {
      const id = newExecutionId(instance.id, `repair:${requestId}`);
      execution = { id, processInstanceId: instance.id, activityId: request.activityId, status: 'ACTIVE', step: 0, jobId: null, waitingFor: null, createdAt: request.now, updatedAt: request.now };
    }
    const t = placeToken(engine.model(instance.processKey), engine.sync, { instance, execution }, request.activityId, request.now);
    if (!request.force) await refuseDuplicates(uow, t);
    const changed = await applyAndSettle(uow, engine, t, request.now);
    await recordOnInstance(uow, instance.id, 'move-token', requestId, execution.id, changed, request.now);
    return { ...changed, executionId: execution.id, alreadyApplied: false };
  });
}

/** Repair: end a token where it stands. Idempotent per request id (default: a new one per call), as {@link moveToken}. */
export async function cancelTokenRun(db: Firestore, engine: Engine, processInstanceId: string, executionIdValue: string, now: Date, requestId: string = newRequestId()): Promise<Repaired> {
  return runRepair(db, async (uow) => {
    const instance = await loadInstance(uow, processInstanceId);
    const execution = await loadExecution(uow, executionIdValue);
    if (instance === null || execution === null || execution.processInstanceId !== instance.id) {
      throw new RepairRefusedError(`execution ${executionIdValue} is not a token of ${processInstanceId}`);
    }
    const applied = appliedRepair(instance, requestId);
    if (applied !== null) return changedBy(uow, applied);
    if (execution.status === 'ENDED' || execution.status === 'CANCELLED') throw new RepairRefusedError(`execution ${executionIdValue} has already ${execution.status.toLowerCase()}`);
    const changed = await applyAndSettle(uow, engine, cancelToken({ instance, execution }, now), now);
    await recordOnInstance(uow, instance.id, 'cancel-token', requestId, execution.id, changed, now);
    return { ...changed, alreadyApplied: false };
  });
}

async function refuseDuplicates(uow: UnitOfWork, t: Transition): Promise<void> {
  for (const point of t.subscribe) {
    const keyDoc = asCorrelationKey(await uow.get(refs.correlationKey(uow.db, point.correlationKey)), point.correlationKey);
    const rival = keyDoc.waiting.find((w) => w.messageName === point.messageName && w.executionId !== point.executionId);
    if (rival !== undefined) {
      throw new RepairRefusedError(
        `refused: execution ${rival.executionId} of ${rival.processInstanceId} already waits for ${point.messageName} with key ${point.correlationKey}; a second waiting point would make the next message ambiguous (use --force to do it anyway)`,
      );
    }
  }
}
