import type { Response } from '@google-cloud/functions-framework';

/**
 * The one place that turns outcomes into HTTP answers. For a push endpoint the
 * status is the message's fate: 2xx acks (deletes it from Pub/Sub), anything
 * else makes Pub/Sub redeliver it later.
 */
export type Answer =
  /** Stored, or already stored: safe to delete from Pub/Sub. */
  | { readonly kind: 'ack'; readonly body: Readonly<Record<string, unknown>> }
  /** Not a push request at all, or too large, or not authorised: 4xx, nothing stored. */
  | { readonly kind: 'reject'; readonly status: 400 | 401 | 403 | 405 | 413 | 415; readonly error: string }
  /** Technical failure: 503 so Pub/Sub redelivers. */
  | { readonly kind: 'retry'; readonly code: string; readonly error: string }
  /** Unexpected failure: 500, still redelivered, logged as a defect. */
  | { readonly kind: 'fail'; readonly code: string; readonly error: string };

export function send(res: Response, answer: Answer): void {
  switch (answer.kind) {
    case 'ack':
      res.status(200).json(answer.body);
      return;
    case 'reject':
      res.status(answer.status).json({ error: answer.error });
      return;
    case 'retry':
      res.status(503).set('Retry-After', '10').json({ error: answer.error, code: answer.code, retry: true });
      return;
    case 'fail':
      res.status(500).json({ error: answer.error, code: answer.code, retry: true });
      return;
  }
}
