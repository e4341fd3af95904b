import { randomUUID } from 'node:crypto';

/** Builders for Pub/Sub push envelopes as Pub/Sub (or its emulator) sends them. */
export interface EnvelopeOptions {
  data?: string;
  attributes?: Record<string, string>;
  messageId?: string;
  publishTime?: string;
  orderingKey?: string;
  subscription?: string;
  deliveryAttempt?: number;
}

export const TEST_SUBSCRIPTION = 'projects/test/subscriptions/fixture-results-push';

export function envelope(options: EnvelopeOptions = {}): Record<string, unknown> {
  const message: Record<string, unknown> = {
    data: options.data ?? '',
    attributes: options.attributes ?? {},
    messageId: options.messageId ?? randomUUID(),
  };
  if (options.publishTime !== undefined) message.publishTime = options.publishTime;
  if (options.orderingKey !== undefined) message.orderingKey = options.orderingKey;
  const body: Record<string, unknown> = { message, subscription: options.subscription ?? TEST_SUBSCRIPTION };
  if (options.deliveryAttempt !== undefined) body.deliveryAttempt = options.deliveryAttempt;
  return body;
}

export function base64Json(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64');
}

export interface CompletionOptions {
  caseId: string;
  completedItems?: number;
  completionTimestamp?: string;
  eventId?: string;
}

export function completion(options: CompletionOptions): Record<string, unknown> {
  const payload: Record<string, unknown> = {
    caseId: options.caseId,
    completedItems: options.completedItems ?? 3,
    completionTimestamp: options.completionTimestamp ?? '2026-11-29T10:00:00Z',
  };
  if (options.eventId !== undefined) payload.eventId = options.eventId;
  return payload;
}

/** A TaskCompleted push envelope. */
export function completionEnvelope(options: CompletionOptions, extra: EnvelopeOptions = {}): Record<string, unknown> {
  return envelope({
    ...extra,
    data: base64Json(completion(options)),
    attributes: { eventType: 'TaskCompleted', ...(extra.attributes ?? {}) },
  });
}
