import type { Request, Response } from '@google-cloud/functions-framework';
import type { Firestore } from '@google-cloud/firestore';
import { z } from 'zod';
import type { RelayConfig } from '../config';
import { classifyFailure, errorMessage, withDeadline } from '../core/errors';
import type { Engine } from '../engine/engine';
import { type Answer, answering, failureAnswer } from '../http/answer';
import { parseBody, refuseMethod } from '../http/request';
import type { Logger } from '../log';
import type { PayloadStore } from '../storage/payload-store';
import type { JobQueue } from '../tasks/job-queue';
import { type Gauges, readAllWaitingGauges, readGauges, type WaitingGauge } from './gauges';
import { account, emptySummary, relayBatch } from './relay-batch';
import { logUnstored } from './unstored-log';
import { relayOne, type RelayDeps } from './relay-one';
import { withSpan } from '../trace/trace';

/** What relayInbox needs, passed in (tests build their own); relayInboxFunction (wiring.ts) builds it from the configuration. */
export interface RelayFunctionDeps {
  /** The Firestore client, created on the first call (keeps the SDK out of the cold start). */
  readonly db: () => Firestore;
  /** The deployed models, loaded on the first call. */
  readonly engine: () => Promise<Engine>;
  /** The jobs queue (INBOX_TASKS_QUEUE): jobs a correlation creates are dispatched after each commit. */
  readonly queue: () => JobQueue;
  /** The timers queue (INBOX_TIMERS_QUEUE): timers a correlation sets (the token's next wait) are dispatched after each commit. */
  readonly timerQueue: () => JobQueue;
  /** JSON lines on stdout for Cloud Logging, tagged with the function; the log-based metrics and alerts read their fields. */
  readonly log: Logger;
  /** Budget, grace, parallelism, batch size, policy, retention and transaction deadline (the INBOX_RELAY_* settings). */
  readonly relay: RelayConfig;
  /**
   * INBOX_SHARDS (default 16): the candidate query runs once per shard, and
   * the scheduled call first moves OPEN documents with a shard at or above
   * it into range (stored under a larger count, or in a rolling deploy).
   */
  readonly shards: number;
  /** The relay's clock; tests pass one they move. */
  readonly now: () => Date;
  /** In [0, 1): backoff jitter and the order of correlation keys within a round (Math.random). */
  readonly random: () => number;
  /** Cloud Storage: the stat of a sender's claim-check reference before its document correlates (RelayDeps.payloadStore). */
  readonly payloadStore?: () => PayloadStore;
}

/**
 * Deadline of the gauge reads after a scheduled call, ms: with the budget and
 * its grace (INBOX_RELAY_BUDGET_MS + INBOX_RELAY_GRACE_MS) the call stays
 * well below the scheduler's 90 s attempt deadline even when Firestore hangs.
 */
const GAUGES_TIMEOUT_MS = 10_000;

const FastPathBody = z.object({ inboxId: z.string().regex(/^[0-9a-f]{40}$/, 'an inbox id (40 hex digits)') });

/**
 * `relayInbox`. Called by Cloud Scheduler every minute with no body: works in
 * rounds until the time budget is spent, logs one summary with the gauges.
 * Called by a fast-path task with `{ inboxId }`: relays that document now.
 * 200 when the call ran (whatever happened to single documents: those are
 * in the summary and on the documents; `gauges` is null if they could not be
 * read in time). When the call itself fails (Firestore could not even be
 * queried for candidates): 503 if a retry can heal it, else 500 (a missing
 * index, a defect; http/answer.ts), and the caller retries either way. No
 * `Retry-After`: the scheduler's and the relay queue's retry settings are the
 * schedule.
 */
export function createRelayHandler(deps: RelayFunctionDeps): (req: Request, res: Response) => Promise<void> {
  return answering((req) => relayInbox(deps, req));
}

async function relayInbox(deps: RelayFunctionDeps, req: Request): Promise<Answer> {
  const wrongMethod = refuseMethod(req, 'use POST (Cloud Scheduler, or a fast-path task with {inboxId})');
  if (wrongMethod !== null) return wrongMethod;
  const body: unknown = req.body;
  // A body without inboxId (the scheduler sends none) is a scheduled call; one with it must be a fast-path task.
  const fast = typeof body === 'object' && body !== null && 'inboxId' in body ? parseBody(req, FastPathBody) : null;
  if (fast !== null && !fast.ok) return fast.answer;
  try {
    const relayDeps: RelayDeps = {
      db: deps.db(),
      engine: await deps.engine(),
      policy: deps.relay.policy,
      retentionMs: deps.relay.retentionMs,
      recordRetentionMs: deps.relay.recordRetentionMs,
      transactionTimeoutMs: deps.relay.transactionTimeoutMs,
      now: deps.now,
      random: deps.random,
      ...(deps.payloadStore === undefined ? {} : { payloadStore: deps.payloadStore }),
    };
    if (fast !== null) {
      // The fast path relays one document, one task per message (some 50 a second at the target load):
      // it logs no summary and reads no gauges on purpose. A summary per message would multiply the log
      // volume, and the gauges cost 4 count() aggregations + one query per shard (and 16 per waited
      // message name) each time; the
      // scheduled call logs both once a minute. What needs attention (a park, a technical failure) is
      // still logged by account().
      const { inboxId } = fast.value;
      const summary = emptySummary();
      // Under the request's span, whose parent is the task's traceparent header (the receipt's "fast-path task" span).
      const result = await withSpan(
        'relay document',
        'active',
        async (span) => {
          const r = await relayOne(relayDeps, inboxId);
          span.setAttribute('inbox.relay.result', r.kind === 'DECIDED' ? r.decision.kind : r.kind);
          await account(summary, inboxId, r, relayDeps, { jobs: deps.queue(), timers: deps.timerQueue() }, deps.log);
          logUnstored(relayDeps.engine, deps.log);
          return r;
        },
        { 'inbox.id': inboxId },
      );
      return { kind: 'ok', body: { inboxId, result: result.kind === 'DECIDED' ? result.decision.kind : result.kind } };
    }
    const summary = await relayBatch(relayDeps, { jobs: deps.queue(), timers: deps.timerQueue() }, deps.log, {
      budgetMs: deps.relay.budgetMs,
      graceMs: deps.relay.graceMs,
      parallelism: deps.relay.parallelism,
      batchSize: deps.relay.batchSize,
      shards: deps.shards,
    });
    // The summary is logged even if the gauges cannot be read: the work it reports is done.
    let gauges: (Gauges & { readonly waiting: readonly WaitingGauge[] }) | null = null;
    try {
      const now = deps.now();
      gauges = await withDeadline('reading the gauges', GAUGES_TIMEOUT_MS, async () => {
        const [levels, waiting] = await Promise.all([
          readGauges(relayDeps.db, deps.shards, now),
          readAllWaitingGauges(relayDeps.db, relayDeps.engine, deps.relay.waitingAlertDays, now),
        ]);
        return { ...levels, waiting };
      });
    } catch (err) {
      // ERROR, not WARNING: without gauges the oldest-OPEN alert sees no data (and so does not fire) and
      // the level alerts freeze; relay-gauges-missing.json alerts on their absence, this line says why.
      deps.log.error('relay gauges not read', { code: classifyFailure(err).code, error: errorMessage(err) });
    }
    deps.log.info('relay summary', { relaySummary: summary, gauges });
    // One line per message name: a log-based metric takes one value (and its labels) from one entry, so the
    // waiting-too-long alert can open an incident per message name (inbox_gauge_waiting_over_threshold).
    for (const waitingGauge of gauges?.waiting ?? []) deps.log.info('waiting gauge', { waitingGauge });
    return { kind: 'ok', body: { ...summary, gauges } };
  } catch (err) {
    const failure = classifyFailure(err);
    deps.log.error('relay call failed; documents stay OPEN for the next call', {
      code: failure.code,
      error: errorMessage(err),
    });
    return failureAnswer(failure, 'relay the inbox', null);
  }
}
