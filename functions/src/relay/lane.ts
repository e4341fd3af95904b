import type { LaneEntry } from '../engine/store/collections';

/**
 * Per-key order of inbox documents, as a sort key: the sender's publishTime,
 * then when we received it, then the id. A missing publishTime (the emulator
 * may leave it out; the receiver drops one outside years 1 to 9999) is
 * replaced by receivedAt in the first place, so the document sorts by its
 * receipt among the others' publish times.
 *
 * Why a sort key and not "compare receivedAt when either publishTime is
 * missing": that pairwise fallback is not transitive once present and
 * missing publishTimes mix (a: pub 1 rcv 9, b: no pub rcv 5, c: pub 2 rcv 0
 * gives a < c < b < a), and the relay would hold every one of them back
 * forever. A lexicographic order on (publishTime ?? receivedAt, receivedAt,
 * id) is a strict total order, so every relay and the buffer agree on one
 * oldest document; with publishTime present on both sides it is exactly the
 * documented rule.
 */
export function compareLane(a: LaneEntry, b: LaneEntry): number {
  const first = (e: LaneEntry): number => (e.publishTime ?? e.receivedAt).getTime();
  return first(a) - first(b) || a.receivedAt.getTime() - b.receivedAt.getTime() || (a.inboxId < b.inboxId ? -1 : a.inboxId > b.inboxId ? 1 : 0);
}

/** Whether `a` goes before `b` in its key's order (see {@link compareLane}). */
export function isOlder(a: LaneEntry, b: LaneEntry): boolean {
  return compareLane(a, b) < 0;
}

/** The oldest entry of a lane, or null. */
export function oldestOf(lane: readonly LaneEntry[]): LaneEntry | null {
  let oldest: LaneEntry | null = null;
  for (const entry of lane) if (oldest === null || isOlder(entry, oldest)) oldest = entry;
  return oldest;
}

/** An entry of the lane older than `entry` (other than itself), or null. */
export function olderThan(lane: readonly LaneEntry[], entry: LaneEntry): LaneEntry | null {
  return oldestOf(lane.filter((e) => e.inboxId !== entry.inboxId && isOlder(e, entry)));
}

export function withoutEntry(lane: readonly LaneEntry[], inboxId: string): LaneEntry[] {
  return lane.filter((e) => e.inboxId !== inboxId);
}

/**
 * The new nextAttemptAt of a document held back behind an older OPEN one of
 * its key, or null to leave it as it is. Held back, it keeps no attempt but
 * moves to just after the older document's nextAttemptAt (1 ms later, so the
 * candidate query, earliest nextAttemptAt first and ties by id, always lists
 * the older one before it), never earlier than it already was. Why: the
 * sweep fills a bounded number of slots per shard with the earliest due
 * documents; documents left due while their older one waits in backoff would
 * take those slots in every round and starve the rest of the shard.
 */
export function holdUntil(own: Date | null, older: Date | null, now: Date): Date | null {
  const target = (older ?? now).getTime() + 1;
  return own !== null && own.getTime() >= target ? null : new Date(target);
}
