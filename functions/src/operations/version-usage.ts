/**
 * What the live instances of a process version hold, from their documents
 * as stored (pure): the tokens by activity `inbox versions` shows, and the
 * pending jobs, scheduled timers and open user tasks that keep a version
 * from being retired. An instance document holds its tokens and jobs
 * (engine/store/instance-doc.ts); a token lists its PENDING timers
 * (`timerIds`) and, at a user task, the task's id (`userTaskId`).
 */
import type { InstanceStatus } from '../engine/state';

/** Statuses in which an instance can still take a step: every InstanceStatus but COMPLETED. */
export const LIVE_STATUSES = ['RUNNING', 'INCIDENT'] as const satisfies readonly InstanceStatus[];

/** A compile-time check: a status added to InstanceStatus is either COMPLETED's kind (final) or listed above. */
type Unlisted = Exclude<InstanceStatus, 'COMPLETED' | (typeof LIVE_STATUSES)[number]>;
export const EVERY_LIVE_STATUS_LISTED: [Unlisted] extends [never] ? true : never = true;

/** How many ids a refusal or a table names of each kind; the counts are whole. */
export const FIRST_IDS = 5;

/** What a set of live instances holds: tokens by activity, and the ids that keep their version in use. */
export interface VersionUsage {
  /** Live tokens by the activity they are at. */
  readonly tokensByActivity: Record<string, number>;
  readonly pendingJobs: string[];
  readonly timers: string[];
  readonly userTasks: string[];
  /** Instances stored in the layout before 0.6.0 (tokens in `executions/`): counted as live, their tokens not read. */
  legacy: number;
}

export const emptyUsage = (): VersionUsage => ({
  tokensByActivity: {},
  pendingJobs: [],
  timers: [],
  userTasks: [],
  legacy: 0,
});

const recordOf = (value: unknown): Record<string, Record<string, unknown>> =>
  typeof value === 'object' && value !== null ? (value as Record<string, Record<string, unknown>>) : {};

/** Adds one live instance document's tokens, PENDING jobs, timers and open user tasks to `usage`. */
export function addUsage(usage: VersionUsage, data: Readonly<Record<string, unknown>>): void {
  if (typeof data.tokens !== 'object' || data.tokens === null) {
    usage.legacy += 1;
    return;
  }
  const tokens = recordOf(data.tokens);
  const active = Array.isArray(data.activeExecutionIds) ? data.activeExecutionIds : [];
  for (const id of active) {
    const token = typeof id === 'string' ? tokens[id] : undefined;
    if (token === undefined || token.status === 'ENDED' || token.status === 'CANCELLED') continue;
    const activity = String(token.activityId);
    usage.tokensByActivity[activity] = (usage.tokensByActivity[activity] ?? 0) + 1;
    if (Array.isArray(token.timerIds))
      usage.timers.push(...token.timerIds.filter((t): t is string => typeof t === 'string'));
    if (token.status === 'WAITING_USER' && typeof token.userTaskId === 'string') usage.userTasks.push(token.userTaskId);
  }
  for (const [id, job] of Object.entries(recordOf(data.jobs))) if (job.status === 'PENDING') usage.pendingJobs.push(id);
}

/** `n thing(s)` with the first few ids: `2 pending jobs (a, b)`, `1 timer (t)`; `more` says the list was read only in part. */
export function countedIds(ids: readonly string[], one: string, many: string, more = false): string {
  const n = `${more ? 'at least ' : ''}${ids.length} ${ids.length === 1 ? one : many}`;
  if (ids.length === 0) return n;
  const shown = ids.slice(0, FIRST_IDS).join(', ');
  return `${n} (${shown}${ids.length > FIRST_IDS ? ', …' : ''})`;
}
