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
  return (
    first(a) - first(b) ||
    a.receivedAt.getTime() - b.receivedAt.getTime() ||
    (a.inboxId < b.inboxId ? -1 : a.inboxId > b.inboxId ? 1 : 0)
  );
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

/**
 * What the relay knows, in its transaction, about a document whose message
 * name has a message start event (engine.startsByMessage); null for any
 * other name.
 */
export interface StartFacts {
  /** A token waits for this message under its key: it will be correlated, not start anything. */
  readonly awaited: boolean;
  /** The instance the start would create, (process, key), exists: it will be parked ALREADY_STARTED. */
  readonly instanceExists: boolean;
}

/** The message names tokens of a key wait for, from its key document's waiting points. */
export function awaitedNames(waiting: readonly { readonly messageName: string }[]): ReadonlySet<string> {
  return new Set(waiting.map((w) => w.messageName));
}

/**
 * Whether an older OPEN document of the lane holds `entry` back. Per-key
 * order: every older one does, with two exceptions.
 *
 * A start message that will start its instance (its name has a message
 * start event, no token waits for it and the instance does not exist yet):
 * only an older message of its own name holds that one back. Why: every
 * other older document of its key waits for a token, and while the instance
 * does not exist, the token it waits for is one that this start creates (a
 * completion that overtook its release is the oldest in the lane); held
 * behind it, the start would wait for what only it can bring, until the
 * older one is parked after the buffer window. Started, the instance's
 * token takes the older one from the buffer when it reaches its waiting
 * point, so the key's messages still reach the process in their order. An
 * older start message of the same name still goes first: it meets the same
 * facts, so the oldest of them starts the instance and the others are
 * parked ALREADY_STARTED, in their order. A start message a token waits for
 * is correlated like any message and keeps the ordinary rule; so does one
 * whose instance exists (it will be parked: holding it back delays that,
 * and nothing older waits for it).
 *
 * A message a token waits for (`awaited` holds its name) is not held behind
 * an older one that no token waits for. Why: the older one can only wait in
 * the buffer until a token comes to take it, and a token that comes later
 * can only come by the process moving on, often by this very message (a
 * sender sent again what the process took already, or sent a later step's
 * message early); held behind it, the awaited message would wait until the
 * older one is parked after the buffer window, with the process stopped.
 * Among messages tokens wait for, the order is kept: an awaited older one
 * holds back every younger one.
 */
export function holdsBack(
  older: LaneEntry,
  entry: LaneEntry,
  start: StartFacts | null,
  awaited: ReadonlySet<string>,
): boolean {
  if (start !== null && !start.awaited && !start.instanceExists) return older.messageName === entry.messageName;
  if (awaited.has(entry.messageName) && !awaited.has(older.messageName)) return false;
  return true;
}
