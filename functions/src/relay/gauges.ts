import type { Firestore, Timestamp } from '@google-cloud/firestore';
import { QUERIES } from '../queries';

/** The relay's gauges, logged with every summary (log-based metrics read them). */
export interface Gauges {
  readonly open: number;
  readonly parked: number;
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
  const [open, parked, ...oldest] = await Promise.all([
    QUERIES.byStatus.build(db, 'OPEN').count().get(),
    QUERIES.byStatus.build(db, 'PARKED').count().get(),
    ...Array.from({ length: shards }, (_, shard) => QUERIES.oldestOpen.build(db, shard).get()),
  ]);
  const times = oldest.flatMap((q) => q.docs.map((d) => (d.get('receivedAt') as Timestamp).toMillis()));
  return {
    open: open.data().count,
    parked: parked.data().count,
    oldestOpenAgeSeconds: times.length === 0 ? null : Math.max(0, Math.round((now.getTime() - Math.min(...times)) / 1000)),
  };
}
