import type { Firestore } from '@google-cloud/firestore';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { storeMessage } from '../../functions/src/inbox/store-message';
import { parsePushEnvelope } from '../../functions/src/receiver/envelope';
import { interpretMessage } from '../../functions/src/receiver/interpret';
import { DEFAULT_NAME_ATTRIBUTE, type MessageRegistry, type MessageType } from '../../functions/src/receiver/registry';
import { FIXTURE_REGISTRY } from './app';

/** A second message type for tests of per-key order (the rounds and two-message models): the counterpart reports the start of execution. */
const ExecutionStartedSchema = z.object({
  caseId: z.string().min(1),
  eventId: z.string().min(1).optional(),
  seq: z.number().int().optional(),
});
export const ExecutionStartedType: MessageType<z.infer<typeof ExecutionStartedSchema>> = {
  name: 'ExecutionStarted',
  nameAttribute: DEFAULT_NAME_ATTRIBUTE,
  schema: ExecutionStartedSchema,
  correlationKey: (p) => p.caseId,
  dedupKey: (p) => p.eventId ?? `ExecutionStarted:${p.caseId}`,
};

/** The fixture app's message types and ExecutionStarted: what storePushed interprets with. */
export const TEST_REGISTRY: MessageRegistry = [...FIXTURE_REGISTRY, ExecutionStartedType];

export interface PushedMessage {
  /** Its message name: one of TEST_REGISTRY's (TaskCompleted, ExecutionStarted), or of `registry`. */
  readonly name: string;
  /** The message types it is interpreted with (default TEST_REGISTRY: an example app's tests pass their own). */
  readonly registry?: MessageRegistry;
  readonly payload: Record<string, unknown>;
  readonly publishTime?: Date;
  /** When the receiver stores it (its receivedAt). */
  readonly receivedAt?: Date;
  /** Shards of the candidate index the receiver writes with; default 16 (the deployed default). */
  readonly shards?: number;
}

/** Stores a message exactly as the receiver does (document, lane entry), returning its inbox id. */
export async function storePushed(db: Firestore, message: PushedMessage): Promise<string> {
  const parsed = parsePushEnvelope({
    message: {
      data: Buffer.from(JSON.stringify(message.payload)).toString('base64'),
      attributes: { eventType: message.name },
      messageId: randomUUID(),
      ...(message.publishTime === undefined ? {} : { publishTime: message.publishTime.toISOString() }),
    },
    subscription: 'projects/test/subscriptions/inbox-push',
  });
  if (!parsed.ok) throw new Error(parsed.error);
  const draft = interpretMessage(parsed.envelope, message.registry ?? TEST_REGISTRY, { referenceBuckets: [] });
  if (draft.kind !== 'valid') throw new Error(`test message is invalid: ${draft.error}`);
  const outcome = await storeMessage(db, draft, {
    envelope: parsed.envelope,
    now: message.receivedAt ?? new Date(),
    shards: message.shards ?? 16,
    offload: null,
  });
  return outcome.id;
}

export const completionPayload = (caseId: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  caseId,
  completedItems: 5,
  completionTimestamp: '2026-11-29T10:00:00Z',
  ...extra,
});

/**
 * Stores an unreadable message exactly as the receiver does: `data` as the
 * message's bytes (not JSON, or JSON that fails the schema), PARKED as
 * INVALID_PAYLOAD with its raw bytes, inline or in rawChunks over 256 KiB.
 * Returns its inbox id.
 */
export async function storeUnreadable(
  db: Firestore,
  data: Buffer,
  name: PushedMessage['name'] = 'TaskCompleted',
): Promise<string> {
  const parsed = parsePushEnvelope({
    message: { data: data.toString('base64'), attributes: { eventType: name }, messageId: randomUUID() },
    subscription: 'projects/test/subscriptions/inbox-push',
  });
  if (!parsed.ok) throw new Error(parsed.error);
  const draft = interpretMessage(parsed.envelope, TEST_REGISTRY, { referenceBuckets: [] });
  if (draft.kind !== 'invalid')
    throw new Error('test message is readable: expected one the receiver parks as INVALID_PAYLOAD');
  return (await storeMessage(db, draft, { envelope: parsed.envelope, now: new Date(), shards: 16, offload: null })).id;
}
