import type { Firestore, Timestamp } from '@google-cloud/firestore';
import { INBOX } from '../inbox/document';

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
 * leads with the shard for the same reason as the candidate index).
 */
export async function readGauges(db: Firestore, shards: number, now: Date): Promise<Gauges> {
  const inbox = db.collection(INBOX);
  const [open, parked, ...oldest] = await Promise.all([
    inbox.where('status', '==', 'OPEN').count().get(),
    inbox.where('status', '==', 'PARKED').count().get(),
    ...Array.from({ length: shards }, (_, shard) => inbox.where('shard', '==', shard).where('status', '==', 'OPEN').orderBy('receivedAt').limit(1).get()),
  ]);
  const times = oldest.flatMap((q) => q.docs.map((d) => (d.get('receivedAt') as Timestamp).toMillis()));
  return {
    open: open.data().count,
    parked: parked.data().count,
    oldestOpenAgeSeconds: times.length === 0 ? null : Math.max(0, Math.round((now.getTime() - Math.min(...times)) / 1000)),
  };
}
