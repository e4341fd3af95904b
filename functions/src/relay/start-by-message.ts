import { computeStep } from '../core/errors';
import type { Engine } from '../engine/engine';
import { executionId, instanceId } from '../engine/ids';
import { applyAndSettle, loadInstance, type Settled } from '../engine/store/apply';
import type { CorrelationKeyDoc } from '../engine/store/collections';
import type { UnitOfWork } from '../engine/store/unit-of-work';
import { startInstance } from '../engine/transitions';
import { messageStartProblem } from '../process/variables';
import { type ClaimSource, messageVariables } from '../inbox/claim-check';
import type { StartFacts } from './lane';

/** A message that found no waiting point, as a start needs it. */
export interface StartMessage {
  /** The inbox id: kept on the instance as `startedByMessage` and first in its `correlatedMessages`. */
  readonly inboxId: string;
  readonly messageName: string;
  readonly correlationKey: string;
  /** The inbox document's payload (an offloaded one's summary) and claims: its variables are messageVariables() of it. */
  readonly document: ClaimSource;
  readonly now: Date;
}

/** What a start message did: started its instance (with what that settled), or why it did not. */
export type StartOutcome =
  | ({ readonly kind: 'STARTED'; readonly processInstanceId: string } & Settled)
  | {
      readonly kind: 'ALREADY_STARTED';
      readonly processInstanceId: string;
      readonly processKey: string;
      readonly instanceStatus: string;
    }
  | {
      readonly kind: 'START_REFUSED';
      readonly processKey: string;
      readonly activityId: string;
      readonly problem: string;
    };

/**
 * The facts of lane.ts's rule for a document, read in the relay's unit of
 * work: null when its name starts no deployed process; otherwise whether a
 * token waits for it under its key (from the key document, already read) and
 * whether the instance it would start exists (one read by id, cached for
 * the start itself).
 */
export async function startFacts(
  uow: UnitOfWork,
  engine: Engine,
  messageName: string,
  key: CorrelationKeyDoc,
): Promise<StartFacts | null> {
  const start = engine.startsByMessage(messageName);
  if (start === null) return null;
  const awaited = key.waiting.some((w) => w.messageName === messageName);
  const instanceExists = (await loadInstance(uow, instanceId(start.model.key, key.correlationKey))) !== null;
  return { awaited, instanceExists };
}

/**
 * Starts the instance a message's name starts, inside the caller's unit of
 * work (the relay marks the inbox document DONE in it): business key = the
 * correlation key, variables = the payload with each claim-check reference
 * under its variable (messageVariables) and the correlation key stored
 * into the message start event's `inbox:correlationKey` variable, the token
 * at the message start event and run until it waits; the new waiting
 * points take their buffered messages in the same transaction
 * (applyAndSettle). null when the name starts no deployed process. One
 * instance per (process, business key): if it exists, ALREADY_STARTED. The
 * variables pass startProcess's door checks first, or START_REFUSED.
 */
export async function startByMessage(
  uow: UnitOfWork,
  engine: Engine,
  message: StartMessage,
): Promise<StartOutcome | null> {
  const start = engine.startsByMessage(message.messageName);
  if (start === null) return null;
  const { model, node } = start;
  const id = instanceId(model.key, message.correlationKey);
  const existing = await loadInstance(uow, id);
  if (existing !== null)
    return { kind: 'ALREADY_STARTED', processInstanceId: id, processKey: model.key, instanceStatus: existing.status };
  const key = node.correlationVariable === null ? {} : { [node.correlationVariable]: message.correlationKey };
  const variables = { ...messageVariables(message.document), ...key };
  const problem = messageStartProblem(model, variables);
  if (problem !== null) return { kind: 'START_REFUSED', processKey: model.key, activityId: node.id, problem };
  const t = computeStep(`starting ${model.key} by message ${message.messageName}`, () =>
    startInstance(model, engine.sync, {
      instanceId: id,
      executionId: executionId(id, 'start'),
      businessKey: message.correlationKey,
      variables,
      now: message.now,
      startEventId: node.id,
    }),
  );
  const tagged = {
    ...t,
    instance: { ...t.instance, startedByMessage: message.inboxId, correlatedMessages: [message.inboxId] },
  };
  const settled = await applyAndSettle(uow, engine, tagged, message.now);
  return { kind: 'STARTED', processInstanceId: id, ...settled };
}
