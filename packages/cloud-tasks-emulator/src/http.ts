import * as http from 'node:http';
import * as https from 'node:https';
import { status } from '@grpc/grpc-js';

/** A fully prepared dispatch request (headers already include the X-CloudTasks-* ones). */
export interface OutgoingRequest {
  readonly url: string;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Copied from the task: undefined sends no body. */
  readonly body?: Buffer | undefined;
}

/** What one attempt produced: an HTTP status, or no response at all. */
export type HttpOutcome =
  { readonly status: number } | { readonly error: string; readonly kind: 'deadline' | 'connection' | 'aborted' };

/**
 * Sends one attempt and settles on the response status line, or on the
 * deadline, a connection error or `signal`, whichever comes first. Never rejects.
 *
 * node:http with `agent: false` rather than fetch: every attempt gets its own
 * connection that is closed afterwards, so no pooled keep-alive socket
 * outlives `stop()` or keeps a test's target server from closing. Redirects
 * are not followed (Cloud Tasks "may" follow them); a 3xx counts as a failure.
 */
export function sendHttp(req: OutgoingRequest, deadlineMs: number, signal?: AbortSignal): Promise<HttpOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const url = new URL(req.url);
    const headers: Record<string, string> = { ...req.headers, 'Content-Length': String(req.body?.length ?? 0) };
    let request: http.ClientRequest;
    try {
      request = (url.protocol === 'https:' ? https : http).request(url, { method: req.method, headers, agent: false });
    } catch (err) {
      // e.g. a caller-supplied header value with characters HTTP does not allow
      resolve({ error: err instanceof Error ? err.message : String(err), kind: 'connection' });
      return;
    }

    const finish = (outcome: HttpOutcome): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const onAbort = (): void => {
      finish({ error: 'dispatch aborted (emulator stopping)', kind: 'aborted' });
      request.destroy();
    };
    // Cloud Tasks cancels the request at the deadline and counts a DEADLINE_EXCEEDED failure.
    const timer = setTimeout(() => {
      finish({ error: `no response within the dispatch deadline of ${deadlineMs} ms`, kind: 'deadline' });
      request.destroy();
    }, deadlineMs);
    timer.unref();
    if (signal?.aborted === true) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });

    request.on('response', (res) => {
      finish({ status: res.statusCode ?? 0 });
      // Drain and drop the body; the connection closes when it ends.
      res.on('error', () => undefined);
      res.resume();
    });
    request.on('error', (err) => finish({ error: err.message, kind: 'connection' }));
    request.end(req.body);
  });
}

/** The google.rpc.Status Cloud Tasks reports for an attempt (HTTP → gRPC code as in google/rpc/code.proto). */
export function rpcStatus(outcome: HttpOutcome): { code: number; message: string } {
  if (!('status' in outcome)) {
    return {
      code: outcome.kind === 'deadline' ? status.DEADLINE_EXCEEDED : status.UNAVAILABLE,
      message: outcome.error,
    };
  }
  const s = outcome.status;
  const byStatus: Record<number, status> = {
    400: status.INVALID_ARGUMENT,
    401: status.UNAUTHENTICATED,
    403: status.PERMISSION_DENIED,
    404: status.NOT_FOUND,
    409: status.ABORTED,
    429: status.RESOURCE_EXHAUSTED,
    499: status.CANCELLED,
    501: status.UNIMPLEMENTED,
    503: status.UNAVAILABLE,
    504: status.DEADLINE_EXCEEDED,
  };
  let code = byStatus[s];
  if (code === undefined) {
    if (s >= 200 && s < 300) code = status.OK;
    else if (s >= 400 && s < 500) code = status.FAILED_PRECONDITION;
    else if (s >= 500 && s < 600) code = status.INTERNAL;
    else code = status.UNKNOWN;
  }
  return { code, message: `HTTP ${s}` };
}
