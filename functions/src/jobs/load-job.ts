import type { Firestore } from '@google-cloud/firestore';
import { asExecution, asInstance, asJob, refs } from '../engine/store/collections';
import type { JobRef } from '../engine/store/complete-job';
import { STORED } from '../engine/store/converters';
import { isLegacyInstance } from '../engine/store/instance-doc';
import { type ExecutionState, type InstanceState, jobIsLive, type JobState } from '../engine/state';
import type { Answer } from '../http/answer';

/**
 * How runJob finds the job a task names, outside any transaction: the
 * instance document that holds it (or, for a task or instance of the layout
 * before, the job's own `jobs/{id}` document), and whether its token still
 * waits for it.
 */

/** Which job a delivery names: the job id, and its instance when the task body carried it. */
export interface JobDelivery {
  readonly db: Firestore;
  readonly jobId: string;
  /** From the task body; null for a task created before bodies carried it (then looked up: {@link jobRefOf}). */
  readonly processInstanceId: string | null;
}

/** `live`: its token waits for it (jobIsLive); a PENDING job that is not live ends stale without running its handler. */
export type Loaded =
  | { readonly kind: 'answered'; readonly answer: Answer }
  | { readonly kind: 'pending'; readonly job: JobState; readonly instance: InstanceState; readonly live: boolean };

/** An old-layout `jobs/{jobId}` document, read outside a transaction; null when there is none. */
async function legacyJob(db: Firestore, jobId: string): Promise<JobState | null> {
  const snap = await refs.job(db, jobId).withConverter(STORED).get();
  return snap.exists ? asJob(snap.data() ?? {}) : null;
}

/**
 * The job and its instance (for the handler), or the 200 that ends a task
 * whose job is gone or finished (a late duplicate delivery). One read: the
 * instance document, which holds the job. An old task body (no instance id)
 * or an old-layout instance reads the job's `jobs/` document too.
 */
export async function loadPendingJob({ db, jobId, processInstanceId }: JobDelivery): Promise<Loaded> {
  const notFound: Loaded = { kind: 'answered', answer: { kind: 'ok', body: { outcome: 'not found', jobId } } };
  let instanceId = processInstanceId;
  let job: JobState | null = null;
  if (instanceId === null) {
    job = await legacyJob(db, jobId);
    if (job === null) return notFound;
    instanceId = job.processInstanceId;
  }
  const data = (await refs.instance(db, instanceId).withConverter(STORED).get()).data();
  if (data === undefined) return notFound;
  if (job === null) {
    const inDoc = isLegacyInstance(data)
      ? undefined
      : (data.jobs as Record<string, Record<string, unknown>> | undefined)?.[jobId];
    // Not in the document: a job of the old layout (its instance not yet written since, or its token moved by a repair).
    job = inDoc === undefined ? await legacyJob(db, jobId) : asJob(inDoc);
  }
  if (job?.processInstanceId !== instanceId) return notFound;
  if (job.status !== 'PENDING')
    return {
      kind: 'answered',
      answer: { kind: 'ok', body: { outcome: 'already finished', jobId, status: job.status } },
    };
  return {
    kind: 'pending',
    job,
    instance: asInstance(data),
    live: jobIsLive(await tokenOf(db, data, job.executionId), job),
  };
}

/** A token as the instance document holds it; an old-layout instance's from its `executions/{id}` document. */
async function tokenOf(
  db: Firestore,
  data: Readonly<Record<string, unknown>>,
  executionId: string,
): Promise<ExecutionState | undefined> {
  if (!isLegacyInstance(data)) {
    const stored = (data.tokens as Record<string, Record<string, unknown>> | undefined)?.[executionId];
    return stored === undefined ? undefined : asExecution(stored);
  }
  const snap = await refs.execution(db, executionId).withConverter(STORED).get();
  return snap.exists ? asExecution(snap.data() ?? {}) : undefined;
}

/** The job's id and instance for the store; null when a body without the instance id names no old job document. */
export async function jobRefOf({ db, jobId, processInstanceId }: JobDelivery): Promise<JobRef | null> {
  if (processInstanceId !== null) return { id: jobId, processInstanceId };
  const job = await legacyJob(db, jobId);
  return job === null ? null : { id: jobId, processInstanceId: job.processInstanceId };
}
