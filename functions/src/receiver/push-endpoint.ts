import type { Request, Response } from '@google-cloud/functions-framework';
import type { PushTokenVerifier } from '../auth/push-token';
import { classifyFailure } from '../core/errors';
import { type Answer, send } from '../http/answer';
import type { Logger } from '../log';
import { parsePushEnvelope, type PushEnvelope } from './envelope';

/** What every Pub/Sub push endpoint of the project checks before it looks at a message. */
export interface PushEndpointDeps {
  /** null when push authentication is disabled (local emulator). */
  readonly verifier: (() => Promise<PushTokenVerifier>) | null;
  readonly log: Logger;
  readonly maxBodyBytes: number;
}

function bodySize(req: Request): number {
  const raw = (req as { rawBody?: unknown }).rawBody;
  if (Buffer.isBuffer(raw)) return raw.length;
  const declared = Number(req.get('content-length'));
  return Number.isFinite(declared) ? declared : 0;
}

/**
 * A push endpoint: POST only, size limit, OIDC token, push envelope (4xx with
 * a JSON error when any is wrong, nothing stored), then `accept` decides.
 * `accept` throws only for technical failures, which are answered 5xx so
 * Pub/Sub redelivers: 503 when a retry can heal it, 500 for the unexpected
 * (never 2xx either way). This is the one place that maps them.
 */
export function createPushEndpoint(deps: PushEndpointDeps, accept: (envelope: PushEnvelope) => Promise<Answer>): (req: Request, res: Response) => Promise<void> {
  const receive = async (req: Request, seen: { messageId?: string; subscription?: string | null }): Promise<Answer> => {
    if (req.method !== 'POST') return { kind: 'reject', status: 405, error: 'use POST (Pub/Sub push)' };
    if (bodySize(req) > deps.maxBodyBytes) {
      return { kind: 'reject', status: 413, error: `body exceeds ${deps.maxBodyBytes} bytes (INBOX_MAX_DATA_BYTES plus envelope)` };
    }
    if (deps.verifier !== null) {
      const auth = await (await deps.verifier())(req.get('authorization'));
      if (!auth.ok) return { kind: 'reject', status: auth.status, error: auth.error };
    }
    const parsed = parsePushEnvelope(req.body);
    if (!parsed.ok) return { kind: 'reject', status: 400, error: parsed.error };
    seen.messageId = parsed.envelope.messageId;
    seen.subscription = parsed.envelope.subscription;
    return accept(parsed.envelope);
  };

  return async (req, res) => {
    let answer: Answer;
    const seen: { messageId?: string; subscription?: string | null } = {};
    try {
      answer = await receive(req, seen);
    } catch (err) {
      const failure = classifyFailure(err);
      const message = err instanceof Error ? err.message : String(err);
      if (failure.kind === 'retryable') {
        deps.log.warn('technical failure, not acked: Pub/Sub will redeliver', { ...seen, code: failure.code, error: message });
        answer = { kind: 'retry', code: failure.code, error: 'temporarily unable to store the message' };
      } else {
        deps.log.error('unexpected failure, not acked: Pub/Sub will redeliver', { ...seen, code: failure.code, error: message });
        answer = { kind: 'fail', code: failure.code, error: 'unable to store the message' };
      }
    }
    if (answer.kind === 'reject') deps.log.warn('request rejected', { status: answer.status, error: answer.error });
    send(res, answer);
  };
}
