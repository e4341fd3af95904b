import type { Request, Response } from '@google-cloud/functions-framework';
import type { ServerResponse } from 'node:http';
import type { FailureClass } from '../core/errors';

/**
 * Seconds a 503 asks a caller to wait (`Retry-After`), where the answer asks
 * for it at all: a direct caller such as startProcess's, or a push endpoint
 * (Pub/Sub keeps its own backoff). Callers whose retry schedule is designed
 * elsewhere get none (see {@link RetryAnswer}).
 */
export const RETRY_AFTER_SECONDS = 10;

/** A JSON body of a 2xx answer. */
export type AnswerBody = Readonly<Record<string, unknown>>;

/**
 * A 4xx: the request is wrong and the same request will be refused again, so
 * its body carries no `retry` flag. A 405 names the methods that are allowed
 * (`Allow`, which RFC 9110 requires on a 405). A 422 is a well-formed
 * request the addressed resource cannot carry out (startProcess for a
 * process that starts by message only). The console adds 404 (no such
 * document or instance, or route) and 409 (a repair refused: the state it
 * would change is not what it needs). `details` are further fields of the
 * JSON body, beside `error`, for callers that read them.
 */
export type Rejection =
  | {
      readonly kind: 'reject';
      readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 415 | 422;
      readonly error: string;
      readonly details?: AnswerBody;
    }
  | { readonly kind: 'reject'; readonly status: 405; readonly error: string; readonly allow: readonly string[] };

/**
 * 503 `retry: true`: a failure a retry can heal (Firestore unavailable,
 * contended or slower than our deadline; a job handler that failed and has
 * retries left). `retryAfterSeconds` sets `Retry-After`; null leaves the
 * schedule to the caller's own retry configuration: Cloud Tasks honours
 * `Retry-After`, and the jobs queue's backoff (1 s, doubling) is the designed
 * one, so runJob and relayInbox send none.
 */
export interface RetryAnswer {
  readonly kind: 'retry';
  readonly code: string;
  readonly error: string;
  readonly retryAfterSeconds: number | null;
}

/**
 * The one answer to an unexpected failure, in every function: 500,
 * `retry: false`, logged at ERROR by the function that answers it.
 *
 * Why 500 and not 503: 503 is the answer for a dependency that is down or
 * slow, and callers treat it that way: Cloud Tasks slows the whole queue
 * down on a 503 (it backs off harder on 429 and 503 and honours
 * `Retry-After`), which a defect in one request does not warrant. Cloud
 * Run's request metrics and the request log carry the status, so 500 keeps a
 * defect apart from an outage (the dashboard's chart of inbox_receiver_5xx
 * splits them by status), and the ERROR line of every defect counts in
 * inbox_errors. An exception that escapes a function anyway is answered 500
 * by the Functions Framework, so the two agree.
 *
 * Why still 5xx: nothing is acked. Pub/Sub push, Cloud Tasks and Cloud
 * Scheduler redeliver on any answer outside 2xx without reading the body; the
 * message or job waits (and is dead-lettered, or recorded on the queue's last
 * attempt) until the defect is fixed.
 *
 * Why `retry: false`: the flag is for a caller that reads the body, such as
 * startProcess's. The same request meets the same defect again, so it must
 * not be told to retry blindly; a redelivery by Pub/Sub or Cloud Tasks still
 * happens, which is the net, not a promise that it heals.
 */
export interface FailAnswer {
  readonly kind: 'fail';
  readonly code: string;
  readonly error: string;
}

/**
 * 200 with bytes, not JSON: a file to save (`Content-Disposition:
 * attachment`), such as the raw data of a document the console offers for
 * download. `filename` is reduced to letters, digits, `.`, `-` and `_`.
 */
export interface BytesAnswer {
  readonly kind: 'bytes';
  readonly body: Buffer;
  readonly contentType: string;
  readonly filename: string;
}

/**
 * 502 `retry: true`: a proxy (`inbox console`) could not get an answer
 * from the server it forwards to, or the credential it adds. The request
 * itself may be fine; the same one may pass once that is fixed.
 */
export interface BadGatewayAnswer {
  readonly kind: 'bad-gateway';
  readonly error: string;
}

/**
 * The one type every function answers with, and {@link httpAnswerOf} the one
 * place that turns it into HTTP ({@link send} writes it for a function,
 * {@link writeAnswer} for the proxy of `inbox console`). For a push endpoint or a task the status is the
 * message's fate: 2xx acks (deletes it from Pub/Sub, ends the task),
 * anything else makes Pub/Sub or Cloud Tasks redeliver it later.
 */
export type Answer =
  /** 200 with a JSON body: done, or nothing (more) to do. */
  | { readonly kind: 'ok'; readonly body: AnswerBody }
  /** 201 with a JSON body: a new resource (startProcess's new instance). */
  | { readonly kind: 'created'; readonly body: AnswerBody }
  | BytesAnswer
  | Rejection
  | RetryAnswer
  | FailAnswer
  | BadGatewayAnswer;

/**
 * The answer to a thrown error, decided by its class: 503 when a retry can
 * heal it, else the unexpected failure's 500 ({@link FailAnswer}; a failure
 * declared permanent outside a job handler is one too). `action` completes
 * "temporarily unable to …" / "unable to …" in the body's `error`.
 */
export function failureAnswer(
  failure: FailureClass,
  action: string,
  retryAfterSeconds: number | null,
): RetryAnswer | FailAnswer {
  return failure.kind === 'retryable'
    ? { kind: 'retry', code: failure.code, error: `temporarily unable to ${action}`, retryAfterSeconds }
    : { kind: 'fail', code: failure.code, error: `unable to ${action}` };
}

/** An HTTP function from one that decides its answer: each function ends in this one `send`. */
export function answering(decide: (req: Request) => Promise<Answer>): (req: Request, res: Response) => Promise<void> {
  return async (req, res) => {
    send(res, await decide(req));
  };
}

/** An answer as HTTP: its status, headers and body (JSON, or the bytes of a {@link BytesAnswer}). */
export interface HttpAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: { readonly json: AnswerBody } | { readonly bytes: Buffer };
}

/** A file name safe in a quoted Content-Disposition parameter: anything but letters, digits, `.`, `-` and `_` becomes `_`. */
function safeFilename(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 200);
  return safe === '' || /^\.+$/.test(safe) ? 'download' : safe;
}

/** The mapping of every {@link Answer} to HTTP, for {@link send} and {@link writeAnswer} alike. */
export function httpAnswerOf(answer: Answer): HttpAnswer {
  switch (answer.kind) {
    case 'ok':
      return { status: 200, headers: {}, body: { json: answer.body } };
    case 'created':
      return { status: 201, headers: {}, body: { json: answer.body } };
    case 'bytes':
      return {
        status: 200,
        headers: {
          'Content-Type': answer.contentType,
          'Content-Disposition': `attachment; filename="${safeFilename(answer.filename)}"`,
        },
        body: { bytes: answer.body },
      };
    case 'reject':
      if (answer.status === 405)
        return { status: 405, headers: { Allow: answer.allow.join(', ') }, body: { json: { error: answer.error } } };
      return { status: answer.status, headers: {}, body: { json: { ...answer.details, error: answer.error } } };
    case 'retry':
      return {
        status: 503,
        headers: answer.retryAfterSeconds === null ? {} : { 'Retry-After': String(answer.retryAfterSeconds) },
        body: { json: { error: answer.error, code: answer.code, retry: true } },
      };
    case 'fail':
      return { status: 500, headers: {}, body: { json: { error: answer.error, code: answer.code, retry: false } } };
    case 'bad-gateway':
      return { status: 502, headers: {}, body: { json: { error: answer.error, retry: true } } };
  }
}

/** Answers through the Functions Framework's (Express) response. */
export function send(res: Response, answer: Answer): void {
  const http = httpAnswerOf(answer);
  res.set(http.headers);
  if ('bytes' in http.body) res.status(http.status).send(http.body.bytes);
  else res.status(http.status).json(http.body.json);
}

/** Answers through a plain node:http response (the proxy of `inbox console`): the same status, headers and JSON as {@link send}. */
export function writeAnswer(res: ServerResponse, answer: Answer): void {
  const http = httpAnswerOf(answer);
  const body = 'bytes' in http.body ? http.body.bytes : Buffer.from(JSON.stringify(http.body.json), 'utf8');
  const type = 'bytes' in http.body ? {} : { 'Content-Type': 'application/json; charset=utf-8' };
  res.writeHead(http.status, { ...type, ...http.headers, 'Content-Length': String(body.length) });
  res.end(body);
}
