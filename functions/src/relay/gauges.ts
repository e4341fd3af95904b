import type { Firestore, Timestamp } from '@google-cloud/firestore';
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
    QUERIES.jobsByStatus.build(db, 'FAILED').count().get(),
    ...Array.from({ length: shards }, (_, shard) => QUERIES.oldestOpen.build(db, shard).get()),
  ]);
  const times = oldest.flatMap((q) => q.docs.map((d) => (d.get('receivedAt') as Timestamp).toMillis()));
  return {
    open: open.data().count,
    parked: parked.data().count,
    openIncidents: incidents.data().count,
    failedJobs: failed.data().count,
    oldestOpenAgeSeconds: times.length === 0 ? null : Math.max(0, Math.round((now.getTime() - Math.min(...times)) / 1000)),
  };
}
