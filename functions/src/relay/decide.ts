import type { FailureClass } from '../core/errors';
import type { WaitingPoint } from '../engine/state';
import type { Unavailable } from '../storage/payload-store';
import { backoffMs } from './backoff';

/** How the relay treats outcomes; defaults in config.ts. */
export interface RelayPolicy {
  /** First backoff step, ms. */
  readonly backoffBaseMs: number;
  /** Largest backoff step, ms. */
  readonly backoffCapMs: number;
  /** How long after receipt (or after its last requeue) a message may wait for its waiting point before it is parked, ms. */
  readonly bufferWindowMs: number;
  /** From this many attempts on, a technical failure is logged as ERROR (it is still retried). */
  readonly errorAfterAttempts: number;
}

/** What correlating one candidate produced. */
export type RelayOutcome =
  | { readonly kind: 'CORRELATED'; readonly processInstanceId: string }
  /** Nobody waited, and the message's name has a message start event: it started this instance. */
  | { readonly kind: 'STARTED'; readonly processInstanceId: string }
  /** A start message, but the instance of (process, correlation key) exists: a second start, a business matter. */
  | {
      readonly kind: 'ALREADY_STARTED';
      readonly processInstanceId: string;
      readonly processKey: string;
      readonly instanceStatus: string;
    }
  /** A start message whose variables the process cannot start with (the door checks of startProcess). */
  | {
      readonly kind: 'START_REFUSED';
      readonly processKey: string;
      readonly activityId: string;
      readonly problem: string;
    }
  | { readonly kind: 'NO_WAITING_INSTANCE' }
  | { readonly kind: 'AMBIGUOUS'; readonly count: number; readonly waiting: readonly WaitingPoint[] }
  /** A token waits for it, but taking it would add a token to an instance that holds MAX_LIVE_TOKENS already. */
  | {
      readonly kind: 'TOKEN_LIMIT';
      readonly processInstanceId: string;
      readonly activityId: string;
      readonly live: number;
    }
  /** The sender's claim-check reference (`uri`) names no readable generation: the stat before correlating said so. */
  | { readonly kind: 'REFERENCE_UNAVAILABLE'; readonly uri: string; readonly unavailable: Unavailable }
  | { readonly kind: 'TECHNICAL'; readonly failure: FailureClass; readonly error: string };

/** What happens to the inbox document. */
export type Decision =
  | { readonly kind: 'DONE'; readonly processInstanceId: string }
  | {
      readonly kind: 'RETRY';
      readonly attempts: number;
      readonly nextAttemptAt: Date;
      readonly lastError: string;
      readonly alarm: boolean;
    }
  | {
      readonly kind: 'PARK';
      readonly reason:
        | 'NO_WAITING_INSTANCE'
        | 'AMBIGUOUS_CORRELATION'
        | 'ALREADY_STARTED'
        | 'START_REFUSED'
        | 'REFERENCE_UNAVAILABLE'
        | 'TOKEN_LIMIT'
        | 'STEP_FAILED';
      readonly attempts: number;
      readonly lastError: string;
      readonly details: Readonly<Record<string, unknown>>;
    };

export interface CandidateState {
  readonly attempts: number;
  readonly receivedAt: Date;
  /**
   * When an operator last requeued it (`inbox requeue`); null or absent if
   * never. The buffer window counts from here when set: a requeue is a fresh
   * chance, not one attempt on a window that ran out before it.
   */
  readonly requeuedAt?: Date | null;
}

/**
 * How many attempts a document whose correlation cannot be applied
 * (STEP_FAILED: the engine's step threw, or needs more than one
 * transaction) gets before it is parked: a deploy under way (functions on
 * two versions of a model) heals within them; anything else does not.
 */
export const STEP_FAILURE_ATTEMPTS = 3;

/**
 * The relay's decision table. Pure: the outcome, the document's attempts and
 * age, the policy, the clock and a random number in; the fate out.
 * - CORRELATED, STARTED: DONE.
 * - ALREADY_STARTED: a second start for a business key is the sender's or
 *   the business's to judge (a repeated release, a reused key); no retry
 *   changes it: park at once, with the instance, for `inbox repair dismiss`
 *   or a decision.
 * - START_REFUSED: the variables stay what they are: park at once (a requeue
 *   after a model fix tries again).
 * - NO_WAITING_INSTANCE: may heal (the process is still on its way): retry
 *   with backoff until the buffer window has passed since receipt (since
 *   the last requeue, if there was one), then park.
 * - AMBIGUOUS: no retry in the world picks the right token: park at once.
 * - REFERENCE_UNAVAILABLE: the referenced generation is gone or replaced;
 *   no retry brings it back (only the sender, or an operator restoring it):
 *   park at once, saying which and the live generation.
 * - TOKEN_LIMIT: the instance holds its most live tokens; the message
 *   is parked at once, with the instance, for a requeue once its tokens
 *   have ended (a flood of messages to one instance ends bounded).
 * - TECHNICAL: a retry heals it; never parked, an ERROR log from
 *   `errorAfterAttempts` on. A step that cannot be applied (STEP_FAILED)
 *   is retried {@link STEP_FAILURE_ATTEMPTS} times, then parked with its
 *   reason: no retry changes what the engine computes.
 */
export function decide(
  outcome: RelayOutcome,
  doc: CandidateState,
  policy: RelayPolicy,
  now: Date,
  random: number,
): Decision {
  const attempts = doc.attempts + 1;
  const retryAt = (): Date =>
    new Date(now.getTime() + backoffMs(attempts, policy.backoffBaseMs, policy.backoffCapMs, random));
  switch (outcome.kind) {
    case 'CORRELATED':
    case 'STARTED':
      return { kind: 'DONE', processInstanceId: outcome.processInstanceId };
    case 'ALREADY_STARTED':
      return {
        kind: 'PARK',
        reason: 'ALREADY_STARTED',
        attempts,
        lastError: `a start message, but process ${outcome.processKey} already has an instance for this key: ${outcome.processInstanceId} (${outcome.instanceStatus}); starting a second one is refused`,
        details: {
          processInstanceId: outcome.processInstanceId,
          processKey: outcome.processKey,
          instanceStatus: outcome.instanceStatus,
        },
      };
    case 'START_REFUSED':
      return {
        kind: 'PARK',
        reason: 'START_REFUSED',
        attempts,
        lastError: `would start process ${outcome.processKey} at ${outcome.activityId}, but ${outcome.problem}`,
        details: { processKey: outcome.processKey, activityId: outcome.activityId, problem: outcome.problem },
      };
    case 'NO_WAITING_INSTANCE': {
      const lastError = 'no process instance waits for this message (not yet, or not any more)';
      const requeued = doc.requeuedAt instanceof Date;
      const since = doc.requeuedAt instanceof Date ? doc.requeuedAt : doc.receivedAt;
      const waited = now.getTime() - since.getTime();
      if (waited >= policy.bufferWindowMs) {
        const window = `buffer window of ${Math.round(policy.bufferWindowMs / 60_000)} min passed since the ${requeued ? 'requeue' : 'receipt'}`;
        return {
          kind: 'PARK',
          reason: 'NO_WAITING_INSTANCE',
          attempts,
          lastError: `${lastError}; ${window}`,
          details: { waitedMs: waited, windowFrom: requeued ? 'REQUEUE' : 'RECEIPT' },
        };
      }
      return { kind: 'RETRY', attempts, nextAttemptAt: retryAt(), lastError, alarm: false };
    }
    case 'AMBIGUOUS':
      return {
        kind: 'PARK',
        reason: 'AMBIGUOUS_CORRELATION',
        attempts,
        lastError: `${outcome.count} process executions wait for this message; correlating to one of them would be a guess`,
        details: {
          count: outcome.count,
          waiting: outcome.waiting.map((w) => ({
            processInstanceId: w.processInstanceId,
            executionId: w.executionId,
            activityId: w.activityId,
          })),
        },
      };
    case 'REFERENCE_UNAVAILABLE': {
      const { unavailable, uri } = outcome;
      const what =
        unavailable.kind === 'MISSING'
          ? `the object of its claim-check reference ${uri} is MISSING: no object of that name exists any more`
          : `the object of its claim-check reference ${uri} CHANGED: the name now holds generation ${unavailable.liveGeneration}, not the one referenced (replaced after the message was sent)`;
      return {
        kind: 'PARK',
        reason: 'REFERENCE_UNAVAILABLE',
        attempts,
        lastError: `${what}; the sender uploads it again and sends a new message, or an operator restores that generation and requeues`,
        details:
          unavailable.kind === 'MISSING'
            ? { uri, unavailable: 'MISSING' }
            : { uri, unavailable: 'CHANGED', liveGeneration: unavailable.liveGeneration },
      };
    }
    case 'TOKEN_LIMIT':
      return {
        kind: 'PARK',
        reason: 'TOKEN_LIMIT',
        attempts,
        lastError: `a token of instance ${outcome.processInstanceId} waits for it at ${outcome.activityId}, but taking it would add a token to an instance that holds ${outcome.live} live tokens already (the most it may hold); requeue it once the instance's tokens have ended`,
        details: { processInstanceId: outcome.processInstanceId, activityId: outcome.activityId, live: outcome.live },
      };
    case 'TECHNICAL':
      if (outcome.failure.kind === 'step' && attempts >= STEP_FAILURE_ATTEMPTS)
        return {
          kind: 'PARK',
          reason: 'STEP_FAILED',
          attempts,
          lastError: `the engine could not apply this message, ${attempts} attempts: ${outcome.error}`,
          details: { error: outcome.error },
        };
      return {
        kind: 'RETRY',
        attempts,
        nextAttemptAt: retryAt(),
        lastError: `${outcome.failure.code}: ${outcome.error}`,
        alarm: attempts >= policy.errorAfterAttempts,
      };
  }
}
