import type { Firestore, Timestamp } from '@google-cloud/firestore';
import type { Engine } from '../engine/engine';
import { STATE_SHARDS } from '../engine/store/collections';
import { countFailedJobs } from '../jobs/failed-jobs';
import { QUERIES } from '../queries';

/**
 * The relay's gauges, logged with every summary: log-based metrics read them,
 * and the parked and incidents alert policies alert on their levels
 * (something is there now), not only on the log entry of the moment it
 * appeared, so an alert stays open until the operator has dealt with every
 * parked document and incident.
 */
export interface Gauges {
  readonly open: number;
  readonly parked: number;
  /** Process instances in INCIDENT (duplicate waiting point, failed job, …), however they got there (`repair move-token --force` logs only on the operator's terminal). */
  readonly openIncidents: number;
  /**
   * Jobs FAILED after their last attempt. They stay FAILED as a record after
   * a repair, so no alert is on this level: the instance's incident (above)
   * carries the lasting state until `inbox repair resolve-incident`.
   */
  readonly failedJobs: number;
  /** Age of the oldest OPEN document in seconds; null when none is open. */
  readonly oldestOpenAgeSeconds: number | null;
}

/**
 * Counts from count() aggregations (no document reads), and the oldest OPEN
 * document from one ordered limit-1 query per shard (the receivedAt index
 * leads with the shard for the same reason as the candidate index). The
 * requirement says one ordered query; one per shard is the deliberate
 * deviation sharding forces (an unsharded receivedAt index would cap inbox
 * writes at about 500/s), see docs/data-model.md, "Indexes".
 */
export async function readGauges(db: Firestore, shards: number, now: Date): Promise<Gauges> {
  const [open, parked, incidents, failed, ...oldest] = await Promise.all([
    QUERIES.byStatus.build(db, 'OPEN').count().get(),
    QUERIES.byStatus.build(db, 'PARKED').count().get(),
    QUERIES.instancesByStatus.build(db, 'INCIDENT').count().get(),
    countFailedJobs(db),
    ...Array.from({ length: shards }, (_, shard) => QUERIES.oldestOpen.build(db, shard).get()),
  ]);
  const times = oldest.flatMap((q) => q.docs.map((d) => (d.get('receivedAt') as Timestamp).toMillis()));
  return {
    open: open.data().count,
    parked: parked.data().count,
    openIncidents: incidents.data().count,
    failedJobs: failed,
    oldestOpenAgeSeconds: times.length === 0 ? null : Math.max(0, Math.round((now.getTime() - Math.min(...times)) / 1000)),
  };
}

/**
 * Per message name the deployed models wait for: how long its tokens have
 * waited. Logged as one `waiting gauge` line per name with every scheduled
 * summary, so a log-based metric can carry the name as a label and the
 * alert policy (waiting-too-long.json) opens one incident per name.
 */
export interface WaitingGauge {
  readonly messageName: string;
  /** Age of the oldest waiting point for this message in seconds; null when no token waits for it. */
  readonly oldestWaitingAgeSeconds: number | null;
  /** Waiting points for this message created at least INBOX_WAITING_ALERT_DAYS ago. */
  readonly waitingOverThreshold: number;
  /** INBOX_WAITING_ALERT_DAYS, so the line says what "over" means. */
  readonly thresholdDays: number;
}

/**
 * The message names the deployed models wait for (receive tasks and message
 * catch events, event-gateway branches included), sorted. Message start
 * events are no waiting points: a start message finds no token to wait.
 */
export function waitedMessageNames(engine: Engine): string[] {
  const names = new Set<string>();
  for (const key of engine.processKeys) {
    for (const node of Object.values(engine.model(key).nodes)) {
      if (node.kind === 'receiveTask' || node.kind === 'messageCatchEvent') names.add(node.messageName);
    }
  }
  return [...names].sort();
}

const DAY_MS = 86_400_000;

/**
 * The waiting gauges, cheaply: one limit-1 query per (message name, shard)
 * for the oldest waiting point (at most one document read each, one billed
 * when it finds none), then a count() aggregation (one read per 1,000
 * matches, at least one) only in the shards whose oldest point is over the
 * threshold; a shard whose oldest point is younger has none over it. With
 * nothing over the threshold that is 16 queries and 16 reads per name.
 */
export async function readWaitingGauges(db: Firestore, messageNames: readonly string[], thresholdDays: number, now: Date): Promise<WaitingGauge[]> {
  const cutoff = new Date(now.getTime() - thresholdDays * DAY_MS);
  return Promise.all(
    messageNames.map(async (messageName): Promise<WaitingGauge> => {
      const shards = Array.from({ length: STATE_SHARDS }, (_, shard) => shard);
      const oldest = await Promise.all(shards.map(async (shard) => ({ shard, createdAt: createdAtOf((await QUERIES.oldestWaiting.build(db, shard, messageName).get()).docs[0]?.get('createdAt')) })));
      const present = oldest.flatMap((o) => (o.createdAt === null ? [] : [o.createdAt]));
      const old = oldest.filter((o) => o.createdAt !== null && o.createdAt <= cutoff.getTime());
      const counts = await Promise.all(old.map(async (o) => (await QUERIES.waitingSince.build(db, o.shard, messageName, cutoff).count().get()).data().count));
      return {
        messageName,
        oldestWaitingAgeSeconds: present.length === 0 ? null : Math.max(0, Math.round((now.getTime() - Math.min(...present)) / 1000)),
        waitingOverThreshold: counts.reduce((a, b) => a + b, 0),
        thresholdDays,
      };
    }),
  );
}

/** A stored createdAt in ms; null when the shard has no waiting point. Throws on anything else (a document edited by hand): the gauges are then not read, and say why. */
function createdAtOf(value: unknown): number | null {
  if (value === undefined) return null;
  if (typeof value === 'object' && value !== null && 'toMillis' in value && typeof value.toMillis === 'function') return (value as Timestamp).toMillis();
  throw new TypeError(`a waiting point's createdAt is not a timestamp (${JSON.stringify(value)})`);
}
