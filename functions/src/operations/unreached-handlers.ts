/**
 * The step handlers a deploy would drop while instances of older versions
 * can still reach a task that needs them: for each version with RUNNING or
 * INCIDENT instances, the job-run elements (async tasks, publishing
 * elements) its live tokens can still reach (bpmn/reachable.ts, a
 * conservative walk), whose handler runJob would not find among the new
 * app's (dropped-handlers.ts's lookup). Each such task, once a token gets
 * there, fails on its first run (NO_HANDLER: the job FAILED, the instance
 * INCIDENT). Pending jobs are counted by dropped-handlers.ts, not here.
 * Pure.
 */
import { handlerKeyOf, publishesByJob, type FlowNode, type ProcessModel } from '../bpmn/model';
import { reachableElements } from '../bpmn/reachable';
import { handlerLookup } from './dropped-handlers';
import type { PositionGroup } from './model-impact';

/** A handler the new app lacks that instances of an older version can still reach. */
export interface UnreachedHandler {
  /** The key runJob would look it up by: the task type, else the element's id. */
  readonly handler: string;
  readonly processKey: string;
  readonly processVersion: string;
  /** The elements of that version that need it. */
  readonly activities: readonly string[];
  /** The instances of that version (of those read) that could still reach one of them. */
  readonly instances: number;
}

/** Whether runJob runs the element as a job, and its task type. */
const jobOf = (node: FlowNode): { taskType: string | null } | null => {
  const byJob =
    publishesByJob(node) ||
    ((node.kind === 'serviceTask' || node.kind === 'sendTask' || node.kind === 'businessRuleTask') && node.async);
  if (!byJob) return null;
  const job: { readonly type: string } | undefined = 'job' in node ? node.job : undefined;
  return { taskType: job?.type ?? null };
};

/**
 * The handlers `handlers` (the new app's steps and publishing steps, by
 * key) lacks that the instances in `positions` (of process `processKey`,
 * all of version `model.version`) can still reach in `model`.
 */
export function unreachedHandlers(
  model: ProcessModel,
  positions: readonly PositionGroup[],
  handlers: ReadonlySet<string>,
): UnreachedHandler[] {
  const lacks = handlerLookup(handlers);
  const found = new Map<string, { activities: Set<string>; instances: number }>();
  for (const group of positions) {
    const missing = new Map<string, Set<string>>();
    for (const id of reachableElements(model, group.starts)) {
      const node = model.nodes[id];
      const job = node === undefined ? null : jobOf(node);
      if (node === undefined || job === null) continue;
      if (!lacks({ processKey: model.key, activityId: id, taskType: job.taskType })) continue;
      const handler = handlerKeyOf(node);
      missing.set(handler, (missing.get(handler) ?? new Set()).add(id));
    }
    for (const [handler, ids] of missing) {
      const entry = found.get(handler) ?? { activities: new Set<string>(), instances: 0 };
      for (const id of ids) entry.activities.add(id);
      entry.instances += group.instances;
      found.set(handler, entry);
    }
  }
  return [...found]
    .map(([handler, e]) => ({
      handler,
      processKey: model.key,
      processVersion: model.version,
      activities: [...e.activities].sort(),
      instances: e.instances,
    }))
    .sort((a, b) => (a.handler < b.handler ? -1 : a.handler > b.handler ? 1 : 0));
}

/** "pay (4 instances of case-handling version 3f2a9c01 could still reach pay)". */
export const unreachedWords = (u: UnreachedHandler): string =>
  `${u.handler} (${u.instances} ${u.instances === 1 ? 'instance' : 'instances'} of ${u.processKey} version ${u.processVersion.slice(0, 8)} could still reach ${u.activities.join(', ')})`;
