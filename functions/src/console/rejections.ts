/** The console API's shared refusals: the answers api.ts and tasks-api.ts both give. */
import type { Rejection } from '../http/answer';

/** A 405 naming the one method the route takes. */
export const onlyMethod = (method: 'GET' | 'POST'): Rejection => ({
  kind: 'reject',
  status: 405,
  error: `this route takes ${method}`,
  allow: [method],
});

/** An operation's refusal (operations/refused.ts): a 409 with its reason, never a retryable 5xx. */
export const refusedAnswer = (reason: string): Rejection => ({
  kind: 'reject',
  status: 409,
  error: reason,
  details: { refused: true },
});
