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
  /** The receipt span's traceparent on the document (inbox/document.ts); null: none. The relay's span for it continues that trace. */
  readonly traceparent?: string | null;
}

/** One round of the candidate query: the candidates and what the queries cost. */
export interface CandidateRound {
  /** Earliest nextAttemptAt first. */
  readonly candidates: Candidate[];
  /** Document reads billed for the shard queries: one per document returned, at least one per query (Firestore's minimum). */
  readonly reads: number;
}

/**
 * OPEN documents whose nextAttemptAt has come, oldest first, from every shard
 * in parallel. The index leads with `shard` (firestore.indexes.json): an
 * index on an ever-growing time field alone caps writes at about 500/s, and
 * the shard prefix spreads those entries over `shards` ranges.
 */
export async function findCandidates(
  db: Firestore,
  shards: number,
  now: Date,
  perShard: number,
): Promise<CandidateRound> {
  const pages = await Promise.all(
    Array.from({ length: shards }, (_, shard) => QUERIES.relayCandidates.build(db, shard, now, perShard).get()),
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
      traceparent: typeof d.get('traceparent') === 'string' ? (d.get('traceparent') as string) : null,
    })),
  );
  const reads = pages.reduce((n, page) => n + Math.max(1, page.size), 0);
  return { candidates: candidates.sort((a, b) => a.nextAttemptAt.getTime() - b.nextAttemptAt.getTime()), reads };
}
