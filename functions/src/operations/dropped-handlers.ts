/**
 * The step handlers a deploy would drop while pending jobs still need them:
 * for each PENDING job of a running instance, the handler runJob would look
 * up (jobs/run-job.ts: the system's publish of the element, then the app's
 * handler by task type, then by the element's id) among the new app's; a job
 * that finds none fails for good on its first run (logged NO_HANDLER: the job FAILED,
 * its instance INCIDENT). Pure.
 */
import { publishStepOf } from '../jobs/publish-steps';
import { modelKeyOf } from '../bpmn/item-body';
import type { PendingJob } from './model-impact';

/** A handler the new app lacks, and the pending jobs that need it. */
export interface DroppedHandler {
  /** The key runJob looks it up by: the task type, else the element's id. */
  readonly handler: string;
  readonly processKey: string;
  readonly activities: readonly string[];
  readonly versions: readonly string[];
  readonly pendingJobs: number;
}

/** The pending jobs whose handler `handlers` (the new app's steps and publishing steps, by key) lacks, by handler and process. */
export function droppedHandlers(jobs: readonly PendingJob[], handlers: ReadonlySet<string>): DroppedHandler[] {
  const lacks = handlerLookup(handlers);
  const found = new Map<
    string,
    { handler: string; processKey: string; activities: Set<string>; versions: Set<string>; count: number }
  >();
  for (const job of jobs) {
    if (!lacks(job)) continue;
    const handler = job.taskType ?? job.activityId;
    const processKey = modelKeyOf(job.processKey);
    const key = `${processKey}\u0000${handler}`;
    const entry = found.get(key) ?? { handler, processKey, activities: new Set(), versions: new Set(), count: 0 };
    entry.activities.add(job.activityId);
    entry.versions.add(job.processVersion);
    entry.count += 1;
    found.set(key, entry);
  }
  return [...found.values()]
    .map((e) => ({
      handler: e.handler,
      processKey: e.processKey,
      activities: [...e.activities].sort(),
      versions: [...e.versions].sort(),
      pendingJobs: e.count,
    }))
    .sort((a, b) =>
      a.handler === b.handler ? (a.processKey < b.processKey ? -1 : 1) : a.handler < b.handler ? -1 : 1,
    );
}

/**
 * Whether runJob would find no handler for a job of `activityId` (of task
 * type `taskType`) of process `processKey` among `handlers` (the app's
 * steps and publishing steps, by key): neither the system's publish of the
 * element, nor a handler by task type, nor one by element id.
 */
export function handlerLookup(
  handlers: ReadonlySet<string>,
): (job: Pick<PendingJob, 'processKey' | 'activityId' | 'taskType'>) => boolean {
  const has = Object.fromEntries([...handlers].map((k) => [k, true]));
  return (job) =>
    publishStepOf(has, job.processKey, job.activityId) === undefined &&
    !(job.taskType !== null && handlers.has(job.taskType)) &&
    !handlers.has(job.activityId);
}

/** "pay (3 pending jobs of case-handling at pay)". */
export const droppedWords = (d: DroppedHandler): string =>
  `${d.handler} (${d.pendingJobs} pending ${d.pendingJobs === 1 ? 'job' : 'jobs'} of ${d.processKey} at ${d.activities.join(', ')})`;
