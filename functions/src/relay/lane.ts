import type { LaneEntry } from '../engine/store/collections';

/**
 * Per-key order of inbox documents: the sender's publishTime first, then
 * when we received it, then the id (a total order, so every relay agrees).
 * A missing publishTime (the emulator may leave it out) falls back to
 * receivedAt for that comparison.
 */
export function isOlder(a: LaneEntry, b: LaneEntry): boolean {
  if (a.publishTime !== null && b.publishTime !== null && a.publishTime.getTime() !== b.publishTime.getTime()) {
    return a.publishTime.getTime() < b.publishTime.getTime();
  }
  if (a.receivedAt.getTime() !== b.receivedAt.getTime()) return a.receivedAt.getTime() < b.receivedAt.getTime();
  return a.inboxId < b.inboxId;
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
