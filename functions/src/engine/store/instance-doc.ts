/**
 * How an instance is stored: `processInstances/{id}` holds the InstanceState
 * and, since the one-document layout, its tokens and jobs too
 * (docs/data-model.md, processInstances):
 * - `tokens`: `{[executionId]: ExecutionState}`, the tokens not yet ended and
 *   the last {@link FINISHED_KEPT} ended or cancelled ones;
 * - `jobs`: `{[jobId]: JobState}`, PENDING and FAILED jobs and the last
 *   {@link FINISHED_KEPT} DONE ones (a late duplicate task still finds its
 *   job "already finished");
 * - `shard` (shardOf(id)) and `jobsPendingSince` (the oldest PENDING job's
 *   createdAt, null when none): sweepJobs' query, one per shard;
 * - `failedJobs`: how many of `jobs` are FAILED (the FAILED-jobs gauge and
 *   `inbox incidents` query instances with failedJobs > 0).
 * A transition is then one write of one document, where it was one per
 * execution and job before.
 *
 * The layout before 0.6.0 (an instance document without `tokens`) is read as it is:
 * the active tokens from `executions/{id}`, their jobs from `jobs/{jobId}`;
 * the first unit of work that writes the instance moves them in and deletes
 * those documents. No migration step.
 */
import { StepFailedError } from '../../core/errors';
import { storedSize } from '../../core/stored-size';
import type { ExecutionState, InstanceState, JobState } from '../state';
import { asExecution, asInstance, asJob, plain, refs, shardOf } from './collections';
import type { UnitOfWork } from './unit-of-work';

/** How many finished (DONE) jobs and ended tokens an instance document keeps besides the live ones. */
export const FINISHED_KEPT = 20;

/** An instance as the store holds it in a unit of work: the state, its tokens and jobs, and what the old layout left. */
export interface InstanceDoc {
  readonly instance: InstanceState;
  readonly tokens: Readonly<Record<string, ExecutionState>>;
  readonly jobs: Readonly<Record<string, JobState>>;
  /** Paths of old-layout `executions/` and `jobs/` documents folded in: deleted with the next write. */
  readonly legacy: readonly string[];
}

/** Whether a stored instance document is of the layout before tokens and jobs moved in. */
export const isLegacyInstance = (data: Readonly<Record<string, unknown>>): boolean =>
  typeof data.tokens !== 'object' || data.tokens === null;

const recordOf = <T>(value: unknown): Record<string, T> =>
  typeof value === 'object' && value !== null ? (value as Record<string, T>) : {};

/** The tokens of a stored instance document (new layout; none for an old one), as ExecutionStates. */
export const instanceTokens = (data: Readonly<Record<string, unknown>>): ExecutionState[] =>
  Object.values(recordOf<Record<string, unknown>>(data.tokens)).map(asExecution);

/** The jobs of a stored instance document (new layout; none for an old one), as JobStates. */
export const instanceJobs = (data: Readonly<Record<string, unknown>>): JobState[] =>
  Object.values(recordOf<Record<string, unknown>>(data.jobs)).map(asJob);

/**
 * Reads an instance through the unit of work (one read, cached; a pending
 * write of this unit is seen). An old-layout document also reads its active
 * tokens and the jobs they wait for, by id, and lists them for deletion.
 */
export async function readInstanceDoc(uow: UnitOfWork, id: string): Promise<InstanceDoc | null> {
  const data = await uow.get(refs.instance(uow.db, id));
  if (data === undefined) return null;
  const instance = asInstance(data);
  if (!isLegacyInstance(data)) {
    return { instance, tokens: recordOf<ExecutionState>(data.tokens), jobs: recordOf<JobState>(data.jobs), legacy: [] };
  }
  const tokens: Record<string, ExecutionState> = {};
  const jobs: Record<string, JobState> = {};
  const legacy: string[] = [];
  for (const executionId of instance.activeExecutionIds) {
    const ref = refs.execution(uow.db, executionId);
    const stored = await uow.get(ref);
    if (stored === undefined) continue;
    const execution = asExecution(stored);
    tokens[execution.id] = execution;
    legacy.push(ref.path);
    if (execution.jobId === null) continue;
    const jobRef = refs.job(uow.db, execution.jobId);
    const job = await uow.get(jobRef);
    if (job === undefined) continue;
    jobs[execution.jobId] = asJob(job);
    legacy.push(jobRef.path);
  }
  return { instance, tokens, jobs, legacy };
}

const finished = (e: ExecutionState): boolean => e.status === 'ENDED' || e.status === 'CANCELLED';
const newestFirst = (a: Date | null, b: Date | null): number => (b?.getTime() ?? 0) - (a?.getTime() ?? 0);

/** The maps as stored: live entries all, finished ones the newest {@link FINISHED_KEPT}. */
function bounded(doc: Pick<InstanceDoc, 'tokens' | 'jobs'>): {
  tokens: Record<string, ExecutionState>;
  jobs: Record<string, JobState>;
} {
  const ended = Object.values(doc.tokens)
    .filter(finished)
    .sort((a, b) => newestFirst(a.updatedAt, b.updatedAt))
    .slice(FINISHED_KEPT);
  const done = Object.values(doc.jobs)
    .filter((j) => j.status === 'DONE')
    .sort((a, b) => newestFirst(a.finishedAt, b.finishedAt))
    .slice(FINISHED_KEPT);
  const tokens = { ...doc.tokens };
  for (const e of ended) delete tokens[e.id];
  const jobs = { ...doc.jobs };
  for (const j of done) delete jobs[j.id];
  return { tokens, jobs };
}

/** The stored fields of an instance document. */
export function instanceDocData(doc: Pick<InstanceDoc, 'instance' | 'tokens' | 'jobs'>): Record<string, unknown> {
  const { tokens, jobs } = bounded(doc);
  const pending = Object.values(jobs)
    .filter((j) => j.status === 'PENDING')
    .map((j) => j.createdAt.getTime());
  return {
    ...plain(doc.instance),
    tokens: Object.fromEntries(Object.entries(tokens).map(([k, v]) => [k, plain(v)])),
    jobs: Object.fromEntries(Object.entries(jobs).map(([k, v]) => [k, plain(v)])),
    shard: shardOf(doc.instance.id),
    jobsPendingSince: pending.length === 0 ? null : new Date(Math.min(...pending)),
    failedJobs: Object.values(jobs).filter((j) => j.status === 'FAILED').length,
  };
}

/** What one write of an instance changes: its state, and tokens and jobs to put in (by id). */
export interface InstancePatch {
  readonly instance?: InstanceState;
  readonly executions?: readonly ExecutionState[];
  readonly jobs?: readonly JobState[];
}

/**
 * The most an instance document may hold by Firestore's count (1 MiB, less
 * what its name and index entries take): a step that would write more is
 * refused before the commit, naming what grew, instead of failing at every
 * retry with Firestore's own refusal.
 */
export const MAX_INSTANCE_BYTES = 1_000_000;

/** The largest variables of `instance`, and what each grew by against `before` (as stored), for the refusal's text. */
function largest(instance: InstanceState, before: InstanceState | undefined): string {
  return Object.entries(instance.variables)
    .map(([name, value]) => {
      const size = storedSize(value);
      const was =
        before !== undefined && Object.hasOwn(before.variables, name) ? storedSize(before.variables[name]) : 0;
      return { name, size, grew: size - was };
    })
    .sort((a, b) => b.grew - a.grew || b.size - a.size)
    .slice(0, 3)
    .map((v) => `variables.${v.name} (${v.size} bytes${v.grew > 0 ? `, ${v.grew} more than stored` : ''})`)
    .join(', ');
}

/**
 * Writes an instance document through the unit of work: the instance as it
 * stands in this unit with `patch` applied, one `set` however often it is
 * called (the unit keeps the last). Old-layout documents it folded in are
 * deleted. Throws a StepFailedError, writing nothing, when the document
 * would be larger than {@link MAX_INSTANCE_BYTES}: the step is not taken.
 */
export async function writeInstance(uow: UnitOfWork, id: string, patch: InstancePatch): Promise<void> {
  const current = await readInstanceDoc(uow, id);
  const instance = patch.instance ?? current?.instance;
  if (instance === undefined) return;
  const tokens: Record<string, ExecutionState> = { ...(current?.tokens ?? {}) };
  for (const e of patch.executions ?? []) tokens[e.id] = e;
  const jobs: Record<string, JobState> = { ...(current?.jobs ?? {}) };
  for (const j of patch.jobs ?? []) jobs[j.id] = j;
  const data = instanceDocData({ instance, tokens, jobs });
  const size = storedSize(data);
  if (size > MAX_INSTANCE_BYTES) {
    const stored = uow.stored(refs.instance(uow.db, id));
    throw new StepFailedError(
      `instance ${id} would be ${size} bytes, more than the ${MAX_INSTANCE_BYTES} one document holds: the step is not taken; the largest variables: ${largest(instance, stored === undefined ? undefined : asInstance(stored))} (keep large data out of process variables: a claim check, docs/how-it-works.md)`,
    );
  }
  for (const path of current?.legacy ?? []) uow.delete(uow.db.doc(path));
  uow.set(refs.instance(uow.db, id), data);
}

/**
 * A job of an instance: from the instance document, or (a job of the old
 * layout not folded in, e.g. one whose token a repair moved on) its
 * `jobs/{id}` document, then listed for deletion by {@link writeJobOf}.
 */
export async function readJob(
  uow: UnitOfWork,
  doc: InstanceDoc,
  jobIdValue: string,
): Promise<{ job: JobState; legacyPath: string | null } | null> {
  const inDoc = doc.jobs[jobIdValue];
  if (inDoc !== undefined) return { job: inDoc, legacyPath: null };
  const ref = refs.job(uow.db, jobIdValue);
  const stored = await uow.get(ref);
  if (stored === undefined) return null;
  const job = asJob(stored);
  return job.processInstanceId === doc.instance.id ? { job, legacyPath: ref.path } : null;
}

/** Writes a job into its instance document; an old-layout `jobs/{id}` it came from is deleted. */
export async function writeJobOf(uow: UnitOfWork, job: JobState, legacyPath: string | null): Promise<void> {
  if (legacyPath !== null) uow.delete(uow.db.doc(legacyPath));
  await writeInstance(uow, job.processInstanceId, { jobs: [job] });
}
