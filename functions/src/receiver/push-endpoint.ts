import type { Request, Response } from '@google-cloud/functions-framework';
import type { AuthFailure, PushTokenVerifier } from '../auth/push-token';
import { classifyFailure, errorMessage } from '../core/errors';
import { type Answer, failureAnswer, type Rejection, RETRY_AFTER_SECONDS, send } from '../http/answer';
import { refuseMethod } from '../http/request';
import type { Logger, Severity } from '../log';
import type { PushEnvelope } from '../inbox/draft';
import { parsePushEnvelope } from './envelope';

/** What every Pub/Sub push endpoint of the project checks before it looks at a message. */
export interface PushEndpointDeps {
  /**
   * Checks the OIDC token Pub/Sub signs for the push subscription (audience
   * INBOX_PUSH_AUDIENCE, signer one of INBOX_PUSH_SERVICE_ACCOUNTS). A
   * function, so google-auth-library loads on the first request, not at
   * start-up. null when INBOX_PUSH_AUTH=disabled: the Pub/Sub emulator sends
   * no token (config.ts refuses the setting on Cloud Run unless
   * INBOX_PUSH_AUTH_DISABLED_ON_CLOUD_RUN=intended).
   */
  readonly verifier: (() => Promise<PushTokenVerifier>) | null;
  /** Structured lines for Cloud Logging; the log-based metrics read their fields. */
  readonly log: Logger;
  /**
   * Largest request body, in bytes, checked first: a larger one is answered
   * 413 before its token or JSON is looked at. The receiver's is base64 of
   * INBOX_MAX_DATA_BYTES (default 10 MiB, Pub/Sub's maximum) plus 512 KiB
   * of envelope; receiveDeadLetter's never falls below Pub/Sub's maximum.
   */
  readonly maxBodyBytes: number;
}

/**
 * Why a push endpoint refused a request, as logged in `reason` of its
 * `request rejected` line (the log-based metric inbox_push_rejections reads
 * it): the token check's word for a 401/403, else what was wrong.
 */
export type RefusalReason = AuthFailure | 'METHOD_NOT_ALLOWED' | 'BODY_TOO_LARGE' | 'NOT_A_PUSH_ENVELOPE';

/** What `accept` may answer: every 4xx is decided here, before it, so each one is logged with its reason. */
export type AcceptAnswer = Exclude<Answer, Rejection>;
/** A 4xx answer and why; the reason goes to the log, the HTTP body keeps only the error text. */
type Refusal = { readonly kind: 'refused'; readonly answer: Rejection; readonly reason: RefusalReason };

/** How an endpoint logs its refusals. */
export interface RefusalLogging {
  /**
   * WARNING for the receiver (Pub/Sub redelivers, then dead-letters, and the
   * alerts read the metric); ERROR for receiveDeadLetter, the last stop: what
   * it refuses is dropped when the dead-letter subscription's retention ends.
   * A request that is not a POST carries no message (a probe, a browser): a
   * WARNING at either endpoint.
   */
  readonly severity: Severity;
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
 * (never 2xx either way; http/answer.ts says why).
 */
export function createPushEndpoint(
  deps: PushEndpointDeps,
  accept: (envelope: PushEnvelope) => Promise<AcceptAnswer>,
  refusals: RefusalLogging = { severity: 'WARNING' },
): (req: Request, res: Response) => Promise<void> {
  const refuse = (status: Exclude<Rejection['status'], 405>, reason: RefusalReason, error: string): Refusal => ({
    kind: 'refused',
    answer: { kind: 'reject', status, error },
    reason,
  });
  const receive = async (
    req: Request,
    seen: { messageId?: string; subscription?: string | null },
  ): Promise<AcceptAnswer | Refusal> => {
    const wrongMethod = refuseMethod(req, 'use POST (Pub/Sub push)');
    if (wrongMethod !== null) return { kind: 'refused', answer: wrongMethod, reason: 'METHOD_NOT_ALLOWED' };
    if (bodySize(req) > deps.maxBodyBytes)
      return refuse(413, 'BODY_TOO_LARGE', `body exceeds ${deps.maxBodyBytes} bytes`);
    if (deps.verifier !== null) {
      const auth = await (await deps.verifier())(req.get('authorization'));
      if (!auth.ok) return refuse(auth.status, auth.reason, auth.error);
    }
    const parsed = parsePushEnvelope(req.body);
    if (!parsed.ok) return refuse(400, 'NOT_A_PUSH_ENVELOPE', parsed.error);
    seen.messageId = parsed.envelope.messageId;
    seen.subscription = parsed.envelope.subscription;
    return accept(parsed.envelope);
  };

  return async (req, res) => {
    let answer: Answer;
    const seen: { messageId?: string; subscription?: string | null } = {};
    try {
      const received = await receive(req, seen);
      if (received.kind === 'refused') {
        // The fields the log-based metric inbox_push_rejections counts (outcome, status, reason; the
        // logger adds the function); test/infra/log-contract.test.ts holds each line to its filter.
        const severity = received.answer.status === 405 ? 'WARNING' : refusals.severity;
        deps.log.log(severity, 'request rejected', {
          outcome: 'rejected',
          status: received.answer.status,
          reason: received.reason,
          error: received.answer.error,
        });
        send(res, received.answer);
        return;
      }
      answer = received;
    } catch (err) {
      const failure = classifyFailure(err);
      const message = errorMessage(err);
      if (failure.kind === 'retryable')
        deps.log.warn('technical failure, not acked: Pub/Sub will redeliver', {
          ...seen,
          code: failure.code,
          error: message,
        });
      else
        deps.log.error('unexpected failure, not acked: Pub/Sub will redeliver', {
          ...seen,
          code: failure.code,
          error: message,
        });
      answer = failureAnswer(failure, 'store the message', RETRY_AFTER_SECONDS);
    }
    send(res, answer);
  };
}
