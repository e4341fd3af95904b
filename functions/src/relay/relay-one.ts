import type { Firestore } from '@google-cloud/firestore';
import { classifyFailure, type FailureClass, withDeadline } from '../core/errors';
import type { Engine } from '../engine/engine';
import type { DuplicateWaitingPoint } from '../engine/store/apply';
import { asCorrelationKey, refs, saveCorrelationKey } from '../engine/store/collections';
import { correlate } from '../engine/store/correlate';
import { runUnitOfWork, type UnitOfWork, type UnitStats } from '../engine/store/unit-of-work';
import type { JobState } from '../engine/state';
import { decide, type Decision, type RelayOutcome, type RelayPolicy } from './classify';
import { inboxRef, type InboxView, laneEntryOf, writeDecision } from './inbox-writes';
import { olderThan, withoutEntry } from './lane';

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

/** What relaying one inbox document did. */
export type RelayResult =
  /** Not OPEN (any more), not due yet, or gone: another relay or the buffer got there first. */
  | { readonly kind: 'SKIPPED'; readonly why: 'GONE' | 'NOT_OPEN' | 'NOT_DUE' }
  /** An older OPEN document of the same key goes first; no attempt counted. */
  | { readonly kind: 'ORDER_BLOCKED'; readonly olderId: string }
  | {
      readonly kind: 'DECIDED';
      readonly decision: Decision;
      readonly jobs: readonly JobState[];
      readonly duplicates: readonly DuplicateWaitingPoint[];
      readonly consumed: readonly string[];
      readonly stats: UnitStats;
    }
  /** The transaction failed (technical); the attempt is recorded if Firestore lets us. */
  | { readonly kind: 'FAILED'; readonly failure: FailureClass; readonly error: string; readonly decision: Decision | null };

type InTransaction = Exclude<RelayResult, { kind: 'FAILED' } | { kind: 'DECIDED' }> | (Omit<Extract<RelayResult, { kind: 'DECIDED' }>, 'stats'>);

/** Finds the oldest OPEN document of the lane older than ours, dropping stale entries on the way. */
async function olderOpen(uow: UnitOfWork, id: string, doc: InboxView, now: Date): Promise<string | null> {
  const correlationKey = doc.correlationKey ?? '';
  let key = asCorrelationKey(await uow.get(refs.correlationKey(uow.db, correlationKey)), correlationKey);
  for (let older = olderThan(key.open, laneEntryOf(id, doc)); older !== null; older = olderThan(key.open, laneEntryOf(id, doc))) {
    const other = (await uow.get(inboxRef(uow, older.inboxId))) as InboxView | undefined;
    if (other !== undefined && other.status === 'OPEN') return older.inboxId;
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
 */
export async function relayOne(deps: RelayDeps, id: string): Promise<RelayResult> {
  try {
    const { result, stats } = await withDeadline('relay transaction', deps.transactionTimeoutMs, () => runUnitOfWork(deps.db, async (uow): Promise<InTransaction> => {
      const now = deps.now();
      const doc = (await uow.get(inboxRef(uow, id))) as InboxView | undefined;
      if (doc === undefined) return { kind: 'SKIPPED', why: 'GONE' };
      if (doc.status !== 'OPEN') return { kind: 'SKIPPED', why: 'NOT_OPEN' };
      if (doc.nextAttemptAt !== null && doc.nextAttemptAt.getTime() > now.getTime()) return { kind: 'SKIPPED', why: 'NOT_DUE' };
      const correlationKey = doc.correlationKey ?? '';
      const olderId = await olderOpen(uow, id, doc, now);
      if (olderId !== null) return { kind: 'ORDER_BLOCKED', olderId };

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
    }));
    return result.kind === 'DECIDED' ? { ...result, stats } : result;
  } catch (err) {
    const failure = classifyFailure(err);
    const error = err instanceof Error ? err.message : String(err);
    return { kind: 'FAILED', failure, error, decision: await recordTechnicalFailure(deps, id, failure, error) };
  }
}

/**
 * Counts a technical failure on the document (backoff, attempts, lastError)
 * in a transaction of its own. If Firestore is what failed, this fails too:
 * the document simply stays OPEN and due, and the next round tries again.
 * Never parks: a retry heals technical failures.
 */
async function recordTechnicalFailure(deps: RelayDeps, id: string, failure: FailureClass, error: string): Promise<Decision | null> {
  try {
    const { result } = await withDeadline('recording a relay failure', deps.transactionTimeoutMs, () => runUnitOfWork(
      deps.db,
      async (uow) => {
        const doc = (await uow.get(inboxRef(uow, id))) as InboxView | undefined;
        if (doc === undefined || doc.status !== 'OPEN') return null;
        const now = deps.now();
        const decision = decide({ kind: 'TECHNICAL', failure, error }, doc, deps.policy, now, deps.random());
        writeDecision(uow, id, doc, decision, now, deps.retentionMs);
        return decision;
      },
      { maxAttempts: 1 },
    ));
    return result;
  } catch {
    return null;
  }
}
