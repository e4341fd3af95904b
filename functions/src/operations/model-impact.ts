/**
 * What of a process is alive at each element, read from Firestore for the
 * impact of a model change (`inbox model diff --live`, `inbox model impact`,
 * the deploy's check): tokens of RUNNING and INCIDENT instances, their
 * PENDING jobs, PENDING timers and OPEN user tasks, by element id, and the
 * pending jobs by the handler runJob would look up for them. Bounded: at
 * most {@link MAX_INSTANCES_READ} instances per process (with its
 * multi-instance items), read a page at a time without their variables;
 * `capped` says when more were left unread.
 */
import type { Firestore } from '@google-cloud/firestore';
import { isLegacyInstance, instanceJobs, instanceTokens } from '../engine/store/instance-doc';
import { COLLECTIONS } from '../engine/store/collections';
import { QUERIES } from '../queries';
import type { WalkStart } from '../bpmn/reachable';

/** Instances read per process (its items included) at most. */
export const MAX_INSTANCES_READ = 5_000;
/** Timers read by id at most per process (the tokens name theirs). */
export const MAX_TIMERS_READ = 5_000;
const PAGE = 500;
const LIVE_STATUSES = ['RUNNING', 'INCIDENT'] as const;
const ENDED: ReadonlySet<string> = new Set(['ENDED', 'CANCELLED']);

/** What sits at one element. */
export interface ElementLoad {
  readonly tokensRunning: number;
  readonly tokensIncident: number;
  readonly pendingJobs: number;
  readonly scheduledTimers: number;
  /** Tokens waiting at the user task: each holds one OPEN task. */
  readonly openUserTasks: number;
}

/** A PENDING job as runJob looks up its handler. */
export interface PendingJob {
  /** The instance's process key (`PROCESS#ACTIVITY` for a multi-instance item). */
  readonly processKey: string;
  readonly processVersion: string;
  readonly activityId: string;
  readonly taskType: string | null;
}

/** Instances of one version standing at the same points (bpmn/reachable.ts walks from there). */
export interface PositionGroup {
  readonly processVersion: string;
  readonly starts: readonly WalkStart[];
  readonly instances: number;
}

export interface ProcessLoad {
  readonly processKey: string;
  /** Instances read (RUNNING and INCIDENT, the items included), those of `skipVersion` among them. */
  readonly instancesRead: number;
  /** More instances (or timers) than the bounds allow: the counts are of those read. */
  readonly capped: boolean;
  /** Instances stored before 0.6.0 (their tokens in `executions/`): not counted. */
  readonly legacyInstances: number;
  /** By element id; tokens, timers and user tasks of instances of `skipVersion` are left out. */
  readonly elements: Readonly<Record<string, ElementLoad>>;
  /** Every PENDING job read, of any version. */
  readonly pendingJobs: readonly PendingJob[];
  /**
   * Where the live tokens of the process's own instances (not its items: a
   * token at their multi-instance activity stands for them) stand, any
   * version, instances at the same points grouped.
   */
  readonly positions: readonly PositionGroup[];
}

/** Where an instance's live tokens stand, for the walk: an element runs again unless a pending job already stands for it. */
function startsOf(tokens: ReturnType<typeof instanceTokens>, pendingAt: ReadonlySet<string>): WalkStart[] {
  const starts = new Map<string, boolean>();
  for (const token of tokens) {
    if (ENDED.has(token.status)) continue;
    const self =
      token.status === 'WAITING_ITEMS' ||
      ((token.status === 'WAITING_JOB' || token.status === 'ACTIVE') && !pendingAt.has(token.activityId));
    starts.set(token.activityId, (starts.get(token.activityId) ?? false) || self);
  }
  return [...starts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([elementId, self]) => ({ elementId, self }));
}

const ZERO: ElementLoad = { tokensRunning: 0, tokensIncident: 0, pendingJobs: 0, scheduledTimers: 0, openUserTasks: 0 };

/** The load of `elementId` in `load` (zeros when nothing sits there). */
export const loadAt = (load: ProcessLoad, elementId: string): ElementLoad =>
  Object.hasOwn(load.elements, elementId) ? (load.elements[elementId] ?? ZERO) : ZERO;

/**
 * Reads what sits at each element of process `processKey` and of its
 * multi-instance items (`PROCESS#ACTIVITY` for each of `itemActivities`).
 * Counts by element leave out instances of `skipVersion` (the version being
 * compared against, whose instances a change does not touch); pending jobs
 * are listed for every version.
 */
export async function readProcessLoad(
  db: Firestore,
  processKey: string,
  itemActivities: readonly string[],
  skipVersion: string | null,
  maxInstances = MAX_INSTANCES_READ,
): Promise<ProcessLoad> {
  const elements: Record<string, ElementLoad> = {};
  const add = (id: string, more: Partial<ElementLoad>): void => {
    const was = Object.hasOwn(elements, id) ? (elements[id] ?? ZERO) : ZERO;
    elements[id] = {
      tokensRunning: was.tokensRunning + (more.tokensRunning ?? 0),
      tokensIncident: was.tokensIncident + (more.tokensIncident ?? 0),
      pendingJobs: was.pendingJobs + (more.pendingJobs ?? 0),
      scheduledTimers: was.scheduledTimers + (more.scheduledTimers ?? 0),
      openUserTasks: was.openUserTasks + (more.openUserTasks ?? 0),
    };
  };
  const pendingJobs: PendingJob[] = [];
  const positions = new Map<string, PositionGroup>();
  const timerIds: string[] = [];
  let read = 0;
  let capped = false;
  let legacy = 0;
  const keys = [processKey, ...itemActivities.map((a) => `${processKey}#${a}`)];
  for (const key of keys)
    for (const status of LIVE_STATUSES) {
      let after: string | null = null;
      for (;;) {
        // At the bound, one more document read only to say whether any was left unread.
        const limit = Math.max(1, Math.min(PAGE, maxInstances - read));
        const page = await QUERIES.instancesOfProcess
          .build(db, key, status, after, limit)
          // Without the variables, the largest part of an instance document.
          .select('processKey', 'processVersion', 'status', 'tokens', 'jobs')
          .get();
        if (read >= maxInstances) {
          capped ||= page.docs.length > 0;
          break;
        }
        for (const doc of page.docs) {
          read += 1;
          const data = doc.data();
          if (isLegacyInstance(data)) {
            legacy += 1;
            continue;
          }
          const version = typeof data.processVersion === 'string' ? data.processVersion : '';
          const jobs = instanceJobs(data).filter((job) => job.status === 'PENDING');
          for (const job of jobs)
            pendingJobs.push({
              processKey: key,
              processVersion: version,
              activityId: job.activityId,
              taskType: job.taskType ?? null,
            });
          if (key === processKey) {
            const starts = startsOf(instanceTokens(data), new Set(jobs.map((j) => j.activityId)));
            const id = JSON.stringify([version, starts]);
            const was = positions.get(id);
            positions.set(id, { processVersion: version, starts, instances: (was?.instances ?? 0) + 1 });
          }
          if (version === skipVersion) continue;
          for (const job of jobs) add(job.activityId, { pendingJobs: 1 });
          for (const token of instanceTokens(data)) {
            if (ENDED.has(token.status)) continue;
            add(token.activityId, status === 'RUNNING' ? { tokensRunning: 1 } : { tokensIncident: 1 });
            if (token.status === 'WAITING_USER') add(token.activityId, { openUserTasks: 1 });
            timerIds.push(...(token.timerIds ?? []));
          }
        }
        if (page.docs.length < limit) break;
        after = page.docs[page.docs.length - 1]?.id ?? null;
      }
    }
  if (timerIds.length > MAX_TIMERS_READ) capped = true;
  const wanted = timerIds.slice(0, MAX_TIMERS_READ);
  for (let i = 0; i < wanted.length; i += PAGE) {
    const refs = wanted.slice(i, i + PAGE).map((id) => db.collection(COLLECTIONS.timers).doc(id));
    for (const snap of await db.getAll(...refs)) {
      const timer = snap.data();
      if (timer?.status === 'PENDING' && typeof timer.activityId === 'string')
        add(timer.activityId, { scheduledTimers: 1 });
    }
  }
  return {
    processKey,
    instancesRead: read,
    capped,
    legacyInstances: legacy,
    elements,
    pendingJobs,
    positions: [...positions.values()],
  };
}
