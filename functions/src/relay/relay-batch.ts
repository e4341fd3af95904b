import { DEFAULTS } from '../config';
import { errorMessage, withDeadline } from '../core/errors';
import type { Logger } from '../log';
import { callBudget, type StepWindow } from './budget';
import { dispatchSettled, logDuplicates, type SettledQueues } from '../jobs/dispatch';
import { findCandidates, type Candidate } from './candidates';
import { compareLane } from './lane';
import { reshardStrays } from './reshard';
import { logUnstored } from './unstored-log';
import type { Decision } from './decide';
import { relayOne, type RelayDeps, type RelayResult } from './relay-one';
import { fromTraceparent, withSpan } from '../trace/trace';

/** Relays one document with `timeLeftMs()` left for its transactions: {@link relayOne}, or an instrumented stand-in. */
export type RelayOneStep = (deps: RelayDeps, id: string, timeLeftMs: () => number) => Promise<RelayResult>;

export interface BatchOptions {
  /** Stop starting new work after this long, ms (default 50 s, INBOX_RELAY_BUDGET_MS: below the scheduler's deadline). */
  readonly budgetMs: number;
  /**
   * Work already started may run this much past the budget, ms: every
   * transaction's deadline (and the candidate query's) is cut to what is left
   * of budget + grace, and a failure is not recorded after it. Default
   * 5,000 (INBOX_RELAY_GRACE_MS).
   */
  readonly graceMs?: number;
  /** Correlation keys worked on at once (default 8, INBOX_RELAY_PARALLELISM). */
  readonly parallelism: number;
  /** Candidates fetched per round, spread over the shards (default 200, INBOX_RELAY_BATCH_SIZE). */
  readonly batchSize: number;
  readonly shards: number;
  /** Milliseconds for the budget and `durationMs`; default `Date.now`. Injected by tests (a clock they step). */
  readonly clock?: () => number;
  /** The per-document step; default {@link relayOne}. Injected by tests to observe or stand in for it. */
  readonly relayOne?: RelayOneStep;
}

/** One relay call's summary: logged as one structured entry. */
export interface RelaySummary {
  candidates: number;
  correlated: number;
  retried: number;
  parked: Record<string, number>;
  skippedForOrder: number;
  skipped: number;
  technicalFailures: number;
  consumedFromBuffer: number;
  /** OPEN documents moved from a shard at or above INBOX_SHARDS into range (stored under another shard count; reshard.ts). */
  resharded: number;
  /** Document reads of the relay's transactions: every attempt of every transaction, whatever its outcome, failure records included. */
  reads: number;
  /** Document writes of the relay's committed transactions (including held-back documents moved behind their older one). */
  writes: number;
  /** Document reads billed for the candidate queries and the stray-shard query (one per document listed, at least one per query). */
  candidateReads: number;
  rounds: number;
  durationMs: number;
}

export function emptySummary(): RelaySummary {
  return {
    candidates: 0,
    correlated: 0,
    retried: 0,
    parked: {},
    skippedForOrder: 0,
    skipped: 0,
    technicalFailures: 0,
    consumedFromBuffer: 0,
    resharded: 0,
    reads: 0,
    writes: 0,
    candidateReads: 0,
    rounds: 0,
    durationMs: 0,
  };
}

/** A parked document, counted by reason and logged at ERROR (the parked metric and its alert read this line). */
function parked(summary: RelaySummary, id: string, decision: Extract<Decision, { kind: 'PARK' }>, log: Logger): void {
  summary.parked[decision.reason] = (summary.parked[decision.reason] ?? 0) + 1;
  log.error('inbox document parked', {
    inboxId: id,
    reason: decision.reason,
    attempts: decision.attempts,
    lastError: decision.lastError,
    details: decision.details,
  });
}

/** Adds one result to the summary, dispatches its jobs and timers and logs what needs attention. */
export async function account(
  summary: RelaySummary,
  id: string,
  result: RelayResult,
  deps: RelayDeps,
  queues: SettledQueues,
  log: Logger,
): Promise<void> {
  // Every result costs reads (and maybe writes), not only decided ones: an honest total per correlated message.
  summary.reads += result.stats.reads;
  summary.writes += result.stats.writes;
  switch (result.kind) {
    case 'SKIPPED':
      summary.skipped += 1;
      return;
    case 'ORDER_BLOCKED':
      summary.skippedForOrder += 1;
      return;
    case 'FAILED':
      summary.technicalFailures += 1;
      // A step the engine cannot apply, out of attempts: the failure's record parked it.
      if (result.decision?.kind === 'PARK') {
        parked(summary, id, result.decision, log);
        return;
      }
      if (result.decision?.kind === 'RETRY' && result.decision.alarm) {
        log.error('inbox document keeps failing technically (still retried)', {
          inboxId: id,
          attempts: result.decision.attempts,
          code: result.failure.code,
          error: result.error,
        });
      } else {
        log.warn('technical failure while relaying; will retry', {
          inboxId: id,
          code: result.failure.code,
          error: result.error,
        });
      }
      return;
    case 'DECIDED': {
      summary.consumedFromBuffer += result.consumed.length;
      const { decision } = result;
      if (decision.kind === 'DONE') summary.correlated += 1;
      if (decision.kind === 'RETRY') summary.retried += 1;
      if (decision.kind === 'PARK') parked(summary, id, decision, log);
      logDuplicates(log, result.duplicates);
      await dispatchSettled(queues, result, log);
    }
  }
}

/** Fisher-Yates with the injected random source; a value outside [0, 1) (or NaN) leaves the item where it is, never loses it. */
function shuffled<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const r = random();
    const j = Number.isFinite(r) ? Math.min(i, Math.max(0, Math.floor(r * (i + 1)))) : i;
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
  return items;
}

/** Candidates grouped by correlation key, each group in per-key order (lane.ts). */
function byKey(candidates: readonly Candidate[]): Candidate[][] {
  const groups = new Map<string, Candidate[]>();
  for (const c of candidates) groups.set(c.correlationKey, [...(groups.get(c.correlationKey) ?? []), c]);
  return [...groups.values()].map((g) => g.sort(compareLane));
}

/**
 * First step of a call: documents stored under another shard count into
 * range (reshard.ts), so the rounds and the gauges see them, within its own
 * share of the budget (budget.ts). A failure here (e.g. the stray-shard
 * index still building after a deploy, or Firestore hanging until the
 * share's deadline) is logged and the call goes on: the documents in range
 * must not wait for the strays, and an outage must reach the candidate query.
 */
async function reshard(
  deps: RelayDeps,
  shards: number,
  summary: RelaySummary,
  log: Logger,
  window: StepWindow,
): Promise<void> {
  try {
    const { moved, reads } = await reshardStrays(deps.db, shards, window);
    summary.resharded += moved;
    summary.candidateReads += reads;
    if (moved > 0) {
      log.warn('OPEN documents were in shards at or above INBOX_SHARDS: moved into range', {
        resharded: moved,
        shards,
        hint: 'INBOX_SHARDS changed, or a receiver runs with another value than the relay (keep them equal)',
      });
    }
  } catch (err) {
    log.warn('stray shards not checked; the next call tries again', { shards, error: errorMessage(err) });
  }
}

/**
 * One relay call: rounds of candidates until the budget is spent or nothing
 * is left. A round takes the oldest due candidates, then works on their keys
 * in random order. Keys run in parallel (bounded); documents of one key run one after
 * the other, and a key's group stops at the first document that cannot go
 * (order-blocked or retried): the younger ones would only be blocked behind it.
 *
 * Time: the stray-shard step first, within a quarter of the budget (at
 * most 10 s, budget.ts); no document is started after `budgetMs`, and no
 * transaction (nor the candidate query) is waited for past
 * `budgetMs + graceMs` (see BatchOptions.graceMs), so the call ends well
 * inside the scheduler's attempt deadline (infra/lib/functions.sh). Not
 * cut: creating the Cloud Tasks of a document that did commit (the client's
 * own deadline applies, and the sweep re-dispatches a job whose task is
 * missing).
 *
 * The first candidate query runs in every call, whatever the stray step
 * took; it throws when Firestore cannot be queried (relayInbox then answers
 * 503), so an outage never looks like an empty inbox.
 */
export async function relayBatch(
  deps: RelayDeps,
  queues: SettledQueues,
  log: Logger,
  options: BatchOptions,
): Promise<RelaySummary> {
  const clock = options.clock ?? Date.now;
  const step = options.relayOne ?? relayOne;
  const graceMs = options.graceMs ?? DEFAULTS.INBOX_RELAY_GRACE_MS;
  const budget = callBudget(clock, options.budgetMs, graceMs);
  const { withinBudget, timeLeftMs } = budget.rounds;
  const summary = emptySummary();
  await reshard(deps, options.shards, summary, log, budget.strays);
  const perShard = Math.max(1, Math.ceil(options.batchSize / options.shards));
  // Rounds go on while they change something; a round of only order-blocked (already held) or skipped documents ends the call.
  // The first round's query runs even past the budget: a call that could not list its candidates must fail, not report nothing.
  for (let progress = true, first = true; first || (progress && withinBudget()); first = false) {
    const round = await withDeadline('the candidate query', Math.max(0, timeLeftMs()), () =>
      findCandidates(deps.db, options.shards, deps.now(), perShard),
    );
    summary.candidateReads += round.reads;
    const { candidates } = round;
    if (candidates.length === 0) break;
    summary.rounds += 1;
    summary.candidates += candidates.length;
    progress = false;
    // Keys in random order: relays running at once (Cloud Functions scales out) then start on different keys instead of queueing for the same locks.
    const groups = shuffled(byKey(candidates), deps.random);
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let group = groups[next++]; group !== undefined; group = groups[next++]) {
        for (const candidate of group) {
          if (!withinBudget()) return;
          // The document's span continues the trace of its receipt (the context stored on it), not the scheduler's call.
          const parent = typeof candidate.traceparent === 'string' ? fromTraceparent(candidate.traceparent) : 'active';
          const result = await withSpan(
            'relay document',
            parent,
            async (span) => {
              const r = await step(deps, candidate.id, timeLeftMs);
              span.setAttribute('inbox.relay.result', r.kind === 'DECIDED' ? r.decision.kind : r.kind);
              await account(summary, candidate.id, r, deps, queues, log);
              return r;
            },
            { 'inbox.id': candidate.id },
          );
          // A held-back document moved behind its older one is progress too: the next round's query lists other documents.
          if (result.kind === 'DECIDED' || (result.kind === 'ORDER_BLOCKED' && result.heldUntil !== null))
            progress = true;
          const moved = result.kind === 'DECIDED' && result.decision.kind !== 'RETRY';
          if (!moved && result.kind !== 'SKIPPED') break;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(options.parallelism, groups.length) }, worker));
  }
  logUnstored(deps.engine, log);
  summary.durationMs = budget.elapsedMs();
  return summary;
}
