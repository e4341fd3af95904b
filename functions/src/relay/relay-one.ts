import { randomUUID } from 'node:crypto';
import type { Firestore } from '@google-cloud/firestore';
import {
  classifyFailure,
  DeadlineExceededError,
  errorMessage,
  type FailureClass,
  storableText,
  withDeadline,
} from '../core/errors';
import type { Engine } from '../engine/engine';
import { type DuplicateWaitingPoint, NOTHING_SETTLED } from '../engine/store/apply';
import { asCorrelationKey, refs, saveCorrelationKey } from '../engine/store/collections';
import { correlate } from '../engine/store/correlate';
import { runUnitOfWork, type StatsTally, type UnitOfWork, type UnitStats } from '../engine/store/unit-of-work';
import type { JobState, TimerState } from '../engine/state';
import { decide, type Decision, type RelayOutcome, type RelayPolicy } from './decide';
import { DEFAULT_RECORD_RETENTION_MS } from '../config';
import { inboxRef, type InboxView, laneEntryOf, type Retention, writeDecision } from './inbox-writes';
import type { LaneEntry } from '../engine/store/collections';
import { awaitedNames, holdsBack, holdUntil, olderThan, withoutEntry } from './lane';
import { startByMessage, startFacts } from './start-by-message';
import { messageVariables, type ReferenceClaim } from '../inbox/claim-check';
import type { PayloadStore } from '../storage/payload-store';
import { withSpan } from '../trace/trace';
import { checkReference, type ReferenceChecks, referenceToCheck, unavailableReference } from './reference-check';

/**
 * What relaying one document needs: the clients already made (relayOne and
 * relayBatch run inside one relay call) and the relay's settings. The relay
 * function (relayInbox) builds it per call from its RelayFunctionDeps.
 */
export interface RelayDeps {
  /** The Firestore client of this relay call. */
  readonly db: Firestore;
  /** The deployed models and the buffer a newly waiting token takes its early message from. */
  readonly engine: Engine;
  /** Backoff, buffer window and ERROR threshold of the relay's decisions (the INBOX_BACKOFF_* and INBOX_BUFFER_WINDOW_MS settings). */
  readonly policy: RelayPolicy;
  /** How long DONE documents are kept (expireAt), ms. */
  readonly retentionMs: number;
  /** How long the processed record of a DONE document is kept, ms; default INBOX_DEDUP_RETENTION_DAYS' default. */
  readonly recordRetentionMs?: number;
  /** The clock of decisions, backoff and expireAt; tests pass a fixed one. */
  readonly now: () => Date;
  /** In [0, 1): the backoff's jitter, so documents that failed together do not retry together (Math.random). */
  readonly random: () => number;
  /**
   * Deadline of one relay transaction, ms. The Firestore client retries an
   * unreachable backend for minutes; the relay gives up sooner and leaves the
   * document OPEN for the next round. A transaction abandoned at the deadline
   * may still commit later, which is safe: it is atomic either way.
   */
  readonly transactionTimeoutMs: number;
  /**
   * Cloud Storage, for the stat of a sender's claim-check reference before
   * its document correlates (reference-check.ts); created on first use.
   * Absent: a document with a reference fails technically (retried), never parks.
   */
  readonly payloadStore?: () => PayloadStore;
}

/**
 * What relaying one inbox document did. Every kind carries the Firestore
 * reads and writes it cost: every attempt of its transaction (contention
 * retries included) and of the failure record, not only decided documents.
 */
export type RelayResult =
  /** Not OPEN (any more), not due yet, or gone: another relay or the buffer got there first. */
  (
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
        /** New NEAR timers, whose tasks are created after the commit (as for `jobs`). */
        readonly timers: readonly TimerState[];
        readonly duplicates: readonly DuplicateWaitingPoint[];
        readonly consumed: readonly string[];
      }
    /** The transaction failed (technical); the attempt is recorded if Firestore lets us and the call has time left. */
    | {
        readonly kind: 'FAILED';
        readonly failure: FailureClass;
        readonly error: string;
        readonly decision: Decision | null;
      }
  ) & { readonly stats: UnitStats };

/** Each kind of a union without its stats (distributes over the union, unlike Omit). */
type WithoutStats<R> = R extends RelayResult ? Omit<R, 'stats'> : never;
/** What the transaction itself returns; the stats are added after it, from the tally. */
type InTransaction = WithoutStats<Exclude<RelayResult, { kind: 'FAILED' }>>;
/** What one attempt returns: a result, or the reference to stat outside the transaction before it can decide (nothing written). */
type AttemptResult = InTransaction | { readonly kind: 'CHECK_REFERENCE'; readonly reference: ReferenceClaim };

/** Transactions one relayOne call runs at most: one that finds a reference to check, one that decides with its stat. */
const MAX_PASSES = 2;

const retentionOf = (deps: RelayDeps): Retention => ({
  doneMs: deps.retentionMs,
  recordMs: deps.recordRetentionMs ?? DEFAULT_RECORD_RETENTION_MS,
});

/** Thrown into an attempt of a transaction whose caller has given up on it: it must not commit behind the caller's back. */
class AbandonedError extends Error {
  override readonly name = 'AbandonedError';
}

/**
 * Runs a unit of work under a deadline, after which no attempt of it
 * commits any more: an attempt still running (a slow read, a hanging buffer
 * lookup) or started by the client's retry throws AbandonedError instead of
 * returning, so the client rolls it back. Without this, a transaction the
 * relay had already counted as a technical failure could still correlate
 * its document, uncounted. Only a commit already on its way at the deadline
 * can still land; the failure record reads the document to find out.
 * `work` gets the attempt number (1, 2, … as the client re-runs it).
 */
async function abandonAfter<T>(
  db: Firestore,
  what: string,
  timeoutMs: number,
  work: (uow: UnitOfWork, attempt: number) => Promise<T>,
  options: { maxAttempts?: number; tally: StatsTally },
): Promise<T> {
  let abandoned = false;
  let attempt = 0;
  try {
    const { result } = await withDeadline(what, timeoutMs, () =>
      runUnitOfWork(
        db,
        async (uow) => {
          attempt += 1;
          if (abandoned) throw new AbandonedError(`${what}: abandoned at its deadline`);
          const value = await work(uow, attempt);
          // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- the catch below sets it while work() awaits; TypeScript keeps the narrowing across the await
          if (abandoned) throw new AbandonedError(`${what}: abandoned at its deadline`);
          return value;
        },
        options,
      ),
    );
    return result;
  } catch (err) {
    if (err instanceof DeadlineExceededError) abandoned = true;
    throw err;
  }
}

/**
 * What one relayOne call wrote, attempt by attempt. Every write of the call
 * to the inbox document carries `relayAttempt` (call id and attempt), so an
 * attempt that finds the document changed by an earlier attempt of this
 * very call (a commit that landed but reported an error, so the client ran
 * the callback again; or one that landed after the deadline) knows it and
 * reports that attempt's result, jobs and writes, instead of SKIPPED.
 */
interface Ledger {
  readonly call: string;
  /** The result each attempt returned and the writes it made, by its relayAttempt token. */
  readonly attempts: Map<
    string,
    { readonly result: InTransaction; readonly writes: number; readonly status: InboxView['status'] }
  >;
  /** The decision each failure-record attempt wrote, by its token. */
  readonly records: Map<string, Decision>;
}

/** The attempt of this call that last wrote the document, if one did and the document still shows its outcome. */
function ownAttempt(
  ledger: Ledger,
  doc: InboxView,
): { readonly result: InTransaction; readonly writes: number } | null {
  const token = doc.relayAttempt ?? null;
  const applied = token === null ? undefined : ledger.attempts.get(token);
  return applied !== undefined && applied.status === doc.status ? applied : null;
}

/** The status a decision leaves the document in. */
const statusAfter = (decision: Decision): InboxView['status'] =>
  decision.kind === 'DONE' ? 'DONE' : decision.kind === 'PARK' ? 'PARKED' : 'OPEN';

/** No time limit beyond the transaction deadline: the fast path, and callers without a budget. */
const UNLIMITED = (): number => Number.POSITIVE_INFINITY;

/**
 * Finds the oldest OPEN document of the lane older than ours among the
 * entries `holds` accepts, dropping stale entries on the way.
 */
async function olderOpen(
  uow: UnitOfWork,
  id: string,
  doc: InboxView,
  now: Date,
  holds: (older: LaneEntry) => boolean,
): Promise<{ readonly id: string; readonly doc: InboxView; readonly entry: LaneEntry } | null> {
  const correlationKey = doc.correlationKey ?? '';
  let key = asCorrelationKey(await uow.get(refs.correlationKey(uow.db, correlationKey)), correlationKey);
  const self = laneEntryOf(id, doc);
  for (
    let older = olderThan(key.open.filter(holds), self);
    older !== null;
    older = olderThan(key.open.filter(holds), self)
  ) {
    const other = (await uow.get(inboxRef(uow, older.inboxId))) as InboxView | undefined;
    if (other !== undefined && other.status === 'OPEN') return { id: older.inboxId, doc: other, entry: older };
    key = { ...key, open: withoutEntry(key.open, older.inboxId) };
    saveCorrelationKey(uow, key, now);
  }
  return null;
}

/**
 * The older OPEN document that holds ours back (lane.ts, holdsBack), or
 * null. The start facts and the key's waiting points are read only when some older document is OPEN:
 * a document first in its lane costs no read more.
 */
async function blockingOlder(
  deps: RelayDeps,
  uow: UnitOfWork,
  id: string,
  doc: InboxView,
  now: Date,
): Promise<{ readonly id: string; readonly doc: InboxView } | null> {
  const first = await olderOpen(uow, id, doc, now, () => true);
  if (first === null) return null;
  const correlationKey = doc.correlationKey ?? '';
  const key = asCorrelationKey(await uow.get(refs.correlationKey(uow.db, correlationKey)), correlationKey);
  const start = await startFacts(uow, deps.engine, doc.messageName ?? '', key);
  const awaited = awaitedNames(key.waiting);
  const self = laneEntryOf(id, doc);
  if (holdsBack(first.entry, self, start, awaited)) return first;
  return olderOpen(uow, id, doc, now, (older) => holdsBack(older, self, start, awaited));
}

/**
 * Relays one inbox document in one Firestore transaction, reading by id only:
 * re-read it (skip unless OPEN and due), check per-key order in its lane,
 * correlate through the engine (or, when nobody waits and its name has a
 * message start event, start that instance), and write the inbox decision,
 * the token's move, variables and follow-up jobs together. Never a correlated process
 * with an OPEN inbox document, or the reverse.
 *
 * The result is exactly what this call did to the document, also when the
 * Firestore client ran the transaction again after a commit that landed but
 * reported an error, or when the commit landed after the deadline (see
 * {@link Ledger}): the relay's counters count every committed decision once.
 *
 * `timeLeftMs`: how long the calling relay call may still run, ms. Each
 * transaction's deadline is the smaller of it and `transactionTimeoutMs`, and
 * a failure is not recorded once it has run out, so one call ends within its
 * budget plus grace (relay-batch.ts) instead of a full transaction deadline
 * and a failure-record deadline after it. Default: no limit.
 */
export async function relayOne(
  deps: RelayDeps,
  id: string,
  timeLeftMs: () => number = UNLIMITED,
): Promise<RelayResult> {
  const tally: StatsTally = { reads: 0, writes: 0 };
  const stats = (): UnitStats => ({ reads: tally.reads, writes: tally.writes });
  const ledger: Ledger = { call: randomUUID(), attempts: new Map(), records: new Map() };
  /** The writes of the earlier attempt whose result the last attempt replayed (it found the document as that one left it), or null. */
  const replayed: { writes: number | null } = { writes: null };
  const checks: ReferenceChecks = new Map();
  try {
    for (let pass = 1; ; pass++) {
      const result = await abandonAfter(
        deps.db,
        'relay transaction',
        Math.min(deps.transactionTimeoutMs, timeLeftMs()),
        (uow, attempt) => relayAttempt(deps, id, ledger, replayed, uow, `${pass}.${attempt}`, checks),
        { tally },
      );
      if (result.kind === 'CHECK_REFERENCE') {
        // The transaction wrote nothing and is over: the stat runs outside it, then a second one decides with its answer.
        if (pass >= MAX_PASSES)
          throw new Error(`the claim-check reference of ${id} changed while it was checked (${result.reference.uri})`);
        checks.set(
          result.reference.uri,
          await checkReference(deps.payloadStore, result.reference, Math.min(deps.transactionTimeoutMs, timeLeftMs())),
        );
        continue;
      }
      // The attempt that replayed wrote nothing; the one whose commit landed wrote these.
      if (replayed.writes !== null) tally.writes += replayed.writes;
      return { ...result, stats: stats() };
    }
  } catch (err) {
    const failure = classifyFailure(err);
    // Stored as the document's lastError: bounded and storable whatever threw it.
    const error = storableText(errorMessage(err));
    const left = timeLeftMs();
    // Past the call's hard stop: not recording loses nothing. The document stays OPEN and due, this attempt is
    // simply not counted, and the next call (or round) tries it again; waiting here would overrun the scheduler's deadline.
    const record =
      left > 0
        ? await recordTechnicalFailure(
            deps,
            id,
            failure,
            error,
            Math.min(deps.transactionTimeoutMs, left),
            tally,
            ledger,
          )
        : null;
    if (record?.kind === 'APPLIED') {
      // The transaction did commit (its answer was lost or came too late): count what it did, not a failure.
      tally.writes += record.writes;
      return { ...record.result, stats: stats() };
    }
    return { kind: 'FAILED', failure, error, decision: record?.decision ?? null, stats: stats() };
  }
}

/**
 * One attempt of relayOne's transaction (the Firestore client may run it
 * again). An attempt that finds the document as an earlier attempt of this
 * call left it replays that attempt's result and sets `replayed.writes` to
 * its writes; every other outcome it records in the ledger.
 */
async function relayAttempt(
  deps: RelayDeps,
  id: string,
  ledger: Ledger,
  replayed: { writes: number | null },
  uow: UnitOfWork,
  attempt: string,
  checks: ReferenceChecks,
): Promise<AttemptResult> {
  replayed.writes = null;
  const token = `${ledger.call}:${attempt}`;
  const now = deps.now();
  const doc = (await uow.get(inboxRef(uow, id))) as InboxView | undefined;
  if (doc === undefined) return { kind: 'SKIPPED', why: 'GONE' };
  const own = ownAttempt(ledger, doc);
  if (own !== null) {
    replayed.writes = own.writes;
    return own.result;
  }
  const done = (result: InTransaction, status: InboxView['status']): InTransaction => {
    ledger.attempts.set(token, { result, writes: uow.writeCount, status });
    return result;
  };
  if (doc.status !== 'OPEN') return { kind: 'SKIPPED', why: 'NOT_OPEN' };
  if (doc.nextAttemptAt !== null && doc.nextAttemptAt.getTime() > now.getTime())
    return { kind: 'SKIPPED', why: 'NOT_DUE' };
  const older = await blockingOlder(deps, uow, id, doc, now);
  if (older !== null) {
    // Held back: no attempt counted, but not left due ahead of its older document either (lane.ts, holdUntil).
    const heldUntil = holdUntil(doc.nextAttemptAt, older.doc.nextAttemptAt, now);
    if (heldUntil !== null) uow.set(inboxRef(uow, id), { ...doc, nextAttemptAt: heldUntil, relayAttempt: token });
    return done({ kind: 'ORDER_BLOCKED', olderId: older.id, heldUntil }, 'OPEN');
  }
  // First in its lane, with a sender's reference not yet checked: stat it outside this transaction first.
  const reference = referenceToCheck(doc, checks);
  if (reference !== null) return { kind: 'CHECK_REFERENCE', reference };
  const decided = await correlateAndDecide(deps, uow, id, doc, now, token, checks);
  return done(decided, statusAfter(decided.decision));
}

/**
 * The document, OPEN, due and first in its lane: out of the lane, correlated
 * through the engine, its decision written (and back into the lane if it is
 * a retry), all in the caller's unit of work.
 */
async function correlateAndDecide(
  deps: RelayDeps,
  uow: UnitOfWork,
  id: string,
  doc: InboxView,
  now: Date,
  token: string,
  checks: ReferenceChecks,
): Promise<Extract<InTransaction, { kind: 'DECIDED' }>> {
  // Out of the lane before correlating, so a waiting point reached on the way sees the next message.
  const correlationKey = doc.correlationKey ?? '';
  const keyRef = refs.correlationKey(uow.db, correlationKey);
  const key = asCorrelationKey(await uow.get(keyRef), correlationKey);
  saveCorrelationKey(uow, { ...key, open: withoutEntry(key.open, id) }, now);

  const unavailable = unavailableReference(doc, checks);
  if (unavailable !== null) {
    // The stat found the referenced generation gone or replaced: parked, the process never sees a reference it cannot read.
    const decision = decide(unavailable, doc, deps.policy, now, deps.random());
    writeDecision(uow, id, doc, decision, now, retentionOf(deps), 'RELAY', token);
    return { kind: 'DECIDED', decision, ...NOTHING_SETTLED };
  }
  const messageName = doc.messageName ?? '';
  const variables = messageVariables(doc);
  // A span per attempt of the transaction: contention retries show as siblings under the document's span.
  const outcome = await withSpan(
    'correlate',
    'active',
    async (span) => {
      const o = await correlate(uow, deps.engine, { messageName, correlationKey, variables, now, messageId: id });
      span.setAttribute('inbox.correlation.outcome', o.kind);
      return o;
    },
    { 'inbox.id': id, 'inbox.message.name': messageName },
  );
  // Nobody waits: a message whose name has a message start event starts its instance, in this transaction.
  const started =
    outcome.kind === 'NO_WAITING_INSTANCE'
      ? await startByMessage(uow, deps.engine, { inboxId: id, messageName, correlationKey, document: doc, now })
      : null;
  const relayOutcome: RelayOutcome =
    started !== null
      ? started.kind === 'STARTED'
        ? { kind: 'STARTED', processInstanceId: started.processInstanceId }
        : started
      : outcome.kind === 'CORRELATED'
        ? { kind: 'CORRELATED', processInstanceId: outcome.processInstanceId }
        : outcome;
  const decision = decide(relayOutcome, doc, deps.policy, now, deps.random());
  if (decision.kind === 'RETRY') {
    const current = asCorrelationKey(await uow.get(keyRef), correlationKey);
    saveCorrelationKey(uow, { ...current, open: [...withoutEntry(current.open, id), laneEntryOf(id, doc)] }, now);
  }
  writeDecision(uow, id, doc, decision, now, retentionOf(deps), started?.kind === 'STARTED' ? 'START' : 'RELAY', token);
  // A start settles like a correlation: its jobs and timers are dispatched after the commit, its buffered messages consumed.
  const settled = outcome.kind === 'CORRELATED' ? outcome : started?.kind === 'STARTED' ? started : NOTHING_SETTLED;
  return {
    kind: 'DECIDED',
    decision,
    jobs: settled.jobs,
    timers: settled.timers,
    duplicates: settled.duplicates,
    consumed: settled.consumed,
  };
}

/** What the failure record found: the failure counted (or not), or the relay transaction's own commit. */
type Recorded =
  | { readonly kind: 'RECORDED'; readonly decision: Decision | null }
  | { readonly kind: 'APPLIED'; readonly result: InTransaction; readonly writes: number };

/**
 * Counts a technical failure on the document (backoff, attempts, lastError)
 * in a transaction of its own. If Firestore is what failed, this fails too:
 * the document simply stays OPEN and due, and the next round tries again.
 * Never parks: a retry heals technical failures. If the document shows the
 * relay transaction's own commit (it landed after all), that is the result.
 * Two attempts: a record that loses the document's lock to that very
 * commit reads it again; a record whose own commit landed but reported an
 * error finds its own write ({@link Ledger}) and does not count twice.
 */
async function recordTechnicalFailure(
  deps: RelayDeps,
  id: string,
  failure: FailureClass,
  error: string,
  timeoutMs: number,
  tally: StatsTally,
  ledger: Ledger,
): Promise<Recorded> {
  try {
    return await abandonAfter(
      deps.db,
      'recording a relay failure',
      timeoutMs,
      async (uow, attempt): Promise<Recorded> => {
        const doc = (await uow.get(inboxRef(uow, id))) as InboxView | undefined;
        if (doc === undefined) return { kind: 'RECORDED', decision: null };
        const own = ownAttempt(ledger, doc);
        if (own !== null) return { kind: 'APPLIED', result: own.result, writes: own.writes };
        const recorded =
          doc.relayAttempt === undefined || doc.relayAttempt === null
            ? undefined
            : ledger.records.get(doc.relayAttempt);
        if (recorded !== undefined) return { kind: 'RECORDED', decision: recorded };
        if (doc.status !== 'OPEN') return { kind: 'RECORDED', decision: null };
        const now = deps.now();
        const token = `${ledger.call}:record:${attempt}`;
        const decision = decide({ kind: 'TECHNICAL', failure, error }, doc, deps.policy, now, deps.random());
        writeDecision(uow, id, doc, decision, now, retentionOf(deps), 'RELAY', token);
        ledger.records.set(token, decision);
        return { kind: 'RECORDED', decision };
      },
      { maxAttempts: 2, tally },
    );
  } catch {
    return { kind: 'RECORDED', decision: null };
  }
}
