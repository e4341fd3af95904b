import { computeStep } from '../../core/errors';
import type { Engine } from '../engine';
import { deliverMessage, deliveryAddsToken } from '../transitions';
import { MAX_LIVE_TOKENS, type Transition, type WaitingPoint } from '../state';
import { applyAndSettle, type Settled, waitingState } from './apply';
import { asCorrelationKey, refs } from './collections';
import type { UnitOfWork } from './unit-of-work';
import { modelOf } from './versions';

/** What correlating one message did. Only CORRELATED changed anything. */
export type CorrelationOutcome =
  | ({
      readonly kind: 'CORRELATED';
      readonly processInstanceId: string;
      readonly executionId: string;
      /** The instance after the message (and any buffered ones it unlocked). */
      readonly transition: Transition;
    } & Settled)
  /** Nobody waits for this message and key (not yet, or not any more). */
  | { readonly kind: 'NO_WAITING_INSTANCE' }
  /** More than one token waits: no right choice, so none is made. */
  | { readonly kind: 'AMBIGUOUS'; readonly count: number; readonly waiting: readonly WaitingPoint[] }
  /** A token waits, but taking the message would add one to an instance that holds MAX_LIVE_TOKENS: nothing changed. */
  | {
      readonly kind: 'TOKEN_LIMIT';
      readonly processInstanceId: string;
      readonly activityId: string;
      readonly live: number;
    };

export interface MessageToCorrelate {
  readonly messageName: string;
  readonly correlationKey: string;
  /** Merged into the process variables. */
  readonly variables: Readonly<Record<string, unknown>>;
  readonly now: Date;
  /** The inbox id, kept in the instance's audit trail (`correlatedMessages`); absent for a message from elsewhere. */
  readonly messageId?: string;
}

/**
 * Correlates a message inside the caller's unit of work (so the caller can
 * change its inbox document in the same transaction). Reads by id only: the
 * per-key document, then the one waiting instance and execution. The token
 * waits at a message wait, or at an event-based gateway whose branch the
 * point is (the other branches go in the same transaction: a timer that
 * fires later finds its timer document deleted).
 */
export async function correlate(
  uow: UnitOfWork,
  engine: Engine,
  message: MessageToCorrelate,
): Promise<CorrelationOutcome> {
  const keyDoc = asCorrelationKey(
    await uow.get(refs.correlationKey(uow.db, message.correlationKey)),
    message.correlationKey,
  );
  const waiting = keyDoc.waiting.filter((w) => w.messageName === message.messageName);
  if (waiting.length === 0) return { kind: 'NO_WAITING_INSTANCE' };
  if (waiting.length > 1) return { kind: 'AMBIGUOUS', count: waiting.length, waiting };

  const point = waiting[0] as WaitingPoint;
  // A waiting point whose token is gone or moved on is stale state: nobody really waits.
  const state = await waitingState(uow, point);
  if (state === null) return { kind: 'NO_WAITING_INSTANCE' };
  const { instance, execution } = state;
  const model = await modelOf(uow, engine, instance);
  const live = instance.activeExecutionIds.length;
  if (live >= MAX_LIVE_TOKENS && deliveryAddsToken(model, execution, point))
    return { kind: 'TOKEN_LIMIT', processInstanceId: instance.id, activityId: point.activityId, live };

  const transition = computeStep(`delivering ${message.messageName} at ${point.activityId}`, () =>
    deliverMessage(
      model,
      engine.sync,
      { instance, execution, point, tokens: state.tokens },
      message.variables,
      message.now,
      message.messageId ?? null,
    ),
  );
  const settled = await applyAndSettle(uow, engine, transition, message.now);
  return { kind: 'CORRELATED', processInstanceId: instance.id, executionId: execution.id, transition, ...settled };
}
