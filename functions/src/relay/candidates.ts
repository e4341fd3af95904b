import type { Firestore } from '@google-cloud/firestore';
import { isTimestamp } from '../core/timestamp';
import type { LaneEntry } from '../engine/store/collections';
import { QUERIES } from '../queries';

const toDate = (value: unknown): Date | null => (isTimestamp(value) ? value.toDate() : null);

/** An OPEN, due inbox document, as listed by the candidate query. */
export interface Candidate extends LaneEntry {
  readonly id: string;
  readonly correlationKey: string;
  readonly nextAttemptAt: Date;
}

/**
 * OPEN documents whose nextAttemptAt has come, oldest first, from every shard
 * in parallel. The index leads with `shard` (firestore.indexes.json): an
 * index on an ever-growing time field alone caps writes at about 500/s, and
 * the shard prefix spreads those entries over `shards` ranges.
 */
export async function findCandidates(db: Firestore, shards: number, now: Date, perShard: number): Promise<Candidate[]> {
  const pages = await Promise.all(
    Array.from({ length: shards }, (_, shard) =>
      QUERIES.relayCandidates.build(db, shard, now, perShard).get(),
    ),
  );
  const candidates = pages.flatMap((page) =>
    page.docs.map((d) => ({
      id: d.id,
      inboxId: d.id,
      messageName: String(d.get('messageName') ?? ''),
      correlationKey: String(d.get('correlationKey') ?? ''),
      nextAttemptAt: toDate(d.get('nextAttemptAt')) ?? now,
      publishTime: toDate(d.get('source.publishTime')),
      receivedAt: toDate(d.get('receivedAt')) ?? now,
    })),
  );
  return candidates.sort((a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime());
}
