import type { Firestore } from '@google-cloud/firestore';
import { classifyFailure, type FailureClass, storableText, withDeadline } from '../core/errors';
import type { Engine } from '../engine/engine';
import type { DuplicateWaitingPoint } from '../engine/store/apply';
import { asCorrelationKey, refs, saveCorrelationKey } from '../engine/store/collections';
import { correlate } from '../engine/store/correlate';
import { runUnitOfWork, type StatsTally, type UnitOfWork, type UnitStats } from '../engine/store/unit-of-work';
import type { JobState } from '../engine/state';
import { decide, type Decision, type RelayOutcome, type RelayPolicy } from './classify';
import { inboxRef, type InboxView, laneEntryOf, writeDecision } from './inbox-writes';
import { holdUntil, olderThan, withoutEntry } from './lane';

export interface RelayDeps {
  readonly db: Firestore;
  readonly engine: Engine;
  readonly policy: RelayPolicy;
  /** How long DONE documents are kept (expireAt), ms. */
  readonly retentionMs: number;
  readonly now: () => Date;
  readonly random: () => number;
  /**
   * Deadline of one relay transaction, ms. The Firestore client retries an
   * unreachable backend for minutes; the relay gives up sooner and leaves the
   * document OPEN for the next round. A transaction abandoned at the deadline
   * may still commit later, which is safe: it is atomic either way.
   */
  readonly transactionTimeoutMs: number;
}

/**
 * What relaying one inbox document did. Every kind carries the Firestore
 * reads and writes it cost: every attempt of its transaction (contention
 * retries included) and of the failure record, not only decided documents.
 */
export type RelayResult = (
  /** Not OPEN (any more), not due yet, or gone: another relay or the buffer got there first. */
  | { readonly kind: 'SKIPPED'; readonly why: 'GONE' | 'NOT_OPEN' | 'NOT_DUE' }
  /**
   * An older OPEN document of the same key goes first; no attempt counted.
   * `heldUntil`: the nextAttemptAt it was moved to (see lane.ts, holdUntil),
   * null when it was already there.
   */
  | { readonly kind: 'ORDER_BLOCKED'; readonly olderId: string; readonly heldUntil: Date | null }
  | {
      readonly kind: 'DECIDED';
      readonly decision: Decision;
      readonly jobs: readonly JobState[];
      readonly duplicates: readonly DuplicateWaitingPoint[];
      readonly consumed: readonly string[];
    }
  /** The transaction failed (technical); the attempt is recorded if Firestore lets us and the call has time left. */
  | { readonly kind: 'FAILED'; readonly failure: FailureClass; readonly error: string; readonly decision: Decision | null }
) & { readonly stats: UnitStats };

/** Each kind of a union without its stats (distributes over the union, unlike Omit). */
type WithoutStats<R> = R extends RelayResult ? Omit<R, 'stats'> : never;
/** What the transaction itself returns; the stats are added after it, from the tally. */
type InTransaction = WithoutStats<Exclude<RelayResult, { kind: 'FAILED' }>>;

/** No time limit beyond the transaction deadline: the fast path, and callers without a budget. */
const UNLIMITED = (): number => Number.POSITIVE_INFINITY;

/** Finds the oldest OPEN document of the lane older than ours, dropping stale entries on the way. */
async function olderOpen(uow: UnitOfWork, id: string, doc: InboxView, now: Date): Promise<{ readonly id: string; readonly doc: InboxView } | null> {
  const correlationKey = doc.correlationKey ?? '';
  let key = asCorrelationKey(await uow.get(refs.correlationKey(uow.db, correlationKey)), correlationKey);
  for (let older = olderThan(key.open, laneEntryOf(id, doc)); older !== null; older = olderThan(key.open, laneEntryOf(id, doc))) {
    const other = (await uow.get(inboxRef(uow, older.inboxId))) as InboxView | undefined;
    if (other !== undefined && other.status === 'OPEN') return { id: older.inboxId, doc: other };
    key = { ...key, open: withoutEntry(key.open, older.inboxId) };
    saveCorrelationKey(uow, key, now);
  }
  return null;
}

/**
 * Relays one inbox document in one Firestore transaction, reading by id only:
 * re-read it (skip unless OPEN and due), check per-key order in its lane,
 * correlate through the engine, and write the inbox decision, the token's
 * move, variables and follow-up jobs together. Never a correlated process
 * with an OPEN inbox document, or the reverse.
 *
 * `timeLeftMs`: how long the calling relay call may still run, ms. Each
 * transaction's deadline is the smaller of it and `transactionTimeoutMs`, and
 * a failure is not recorded once it has run out, so one call ends within its
 * budget plus grace (relay-batch.ts) instead of a full transaction deadline
 * and a failure-record deadline after it. Default: no limit.
 */
export async function relayOne(deps: RelayDeps, id: string, timeLeftMs: () => number = UNLIMITED): Promise<RelayResult> {
  const tally: StatsTally = { reads: 0, writes: 0 };
  const stats = (): UnitStats => ({ reads: tally.reads, writes: tally.writes });
  try {
    const { result } = await withDeadline('relay transaction', Math.min(deps.transactionTimeoutMs, timeLeftMs()), () => runUnitOfWork(deps.db, async (uow): Promise<InTransaction> => {
      const now = deps.now();
      const doc = (await uow.get(inboxRef(uow, id))) as InboxView | undefined;
      if (doc === undefined) return { kind: 'SKIPPED', why: 'GONE' };
      if (doc.status !== 'OPEN') return { kind: 'SKIPPED', why: 'NOT_OPEN' };
      if (doc.nextAttemptAt !== null && doc.nextAttemptAt.getTime() > now.getTime()) return { kind: 'SKIPPED', why: 'NOT_DUE' };
      const correlationKey = doc.correlationKey ?? '';
      const older = await olderOpen(uow, id, doc, now);
      if (older !== null) {
        // Held back: no attempt counted, but not left due ahead of its older document either (lane.ts, holdUntil).
        const heldUntil = holdUntil(doc.nextAttemptAt, older.doc.nextAttemptAt, now);
        if (heldUntil !== null) uow.set(inboxRef(uow, id), { ...doc, nextAttemptAt: heldUntil });
        return { kind: 'ORDER_BLOCKED', olderId: older.id, heldUntil };
      }

      // Out of the lane before correlating, so a waiting point reached on the way sees the next message.
      const keyRef = refs.correlationKey(uow.db, correlationKey);
      const key = asCorrelationKey(await uow.get(keyRef), correlationKey);
      saveCorrelationKey(uow, { ...key, open: withoutEntry(key.open, id) }, now);

      const outcome = await correlate(uow, deps.engine, { messageName: doc.messageName ?? '', correlationKey, variables: doc.payload ?? {}, now, messageId: id });
      const relayOutcome: RelayOutcome = outcome.kind === 'CORRELATED' ? { kind: 'CORRELATED', processInstanceId: outcome.processInstanceId } : outcome;
      const decision = decide(relayOutcome, doc, deps.policy, now, deps.random());
      if (decision.kind === 'RETRY') {
        const current = asCorrelationKey(await uow.get(keyRef), correlationKey);
        saveCorrelationKey(uow, { ...current, open: [...withoutEntry(current.open, id), laneEntryOf(id, doc)] }, now);
      }
      writeDecision(uow, id, doc, decision, now, deps.retentionMs);
      const settled = outcome.kind === 'CORRELATED' ? outcome : { jobs: [], duplicates: [], consumed: [] };
      return { kind: 'DECIDED', decision, jobs: settled.jobs, duplicates: settled.duplicates, consumed: settled.consumed };
    }, { tally }));
    return { ...result, stats: stats() };
  } catch (err) {
    const failure = classifyFailure(err);
    // Stored as the document's lastError: bounded and storable whatever threw it.
    const error = storableText(err instanceof Error ? err.message : String(err));
    const left = timeLeftMs();
    // Past the call's hard stop: not recording loses nothing. The document stays OPEN and due, this attempt is
    // simply not counted, and the next call (or round) tries it again; waiting here would overrun the scheduler's deadline.
    const decision = left > 0 ? await recordTechnicalFailure(deps, id, failure, error, Math.min(deps.transactionTimeoutMs, left), tally) : null;
    return { kind: 'FAILED', failure, error, decision, stats: stats() };
  }
}

/**
 * Counts a technical failure on the document (backoff, attempts, lastError)
 * in a transaction of its own. If Firestore is what failed, this fails too:
 * the document simply stays OPEN and due, and the next round tries again.
 * Never parks: a retry heals technical failures.
 */
async function recordTechnicalFailure(deps: RelayDeps, id: string, failure: FailureClass, error: string, timeoutMs: number, tally: StatsTally): Promise<Decision | null> {
  try {
    const { result } = await withDeadline('recording a relay failure', timeoutMs, () => runUnitOfWork(
      deps.db,
      async (uow) => {
        const doc = (await uow.get(inboxRef(uow, id))) as InboxView | undefined;
        if (doc === undefined || doc.status !== 'OPEN') return null;
        const now = deps.now();
        const decision = decide({ kind: 'TECHNICAL', failure, error }, doc, deps.policy, now, deps.random());
        writeDecision(uow, id, doc, decision, now, deps.retentionMs);
        return decision;
      },
      { maxAttempts: 1, tally },
    ));
    return result;
  } catch {
    return null;
  }
}
