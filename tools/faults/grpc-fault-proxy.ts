import * as http2 from 'node:http2';
import { forwardable, h2Relay, responseHeaders } from './h2-relay';
import { listenOnLoopback } from './listen';

/**
 * An HTTP/2 (gRPC) proxy in front of an emulator that passes every call
 * through, except that it can lose the answer of a call that succeeded: the
 * request reaches the emulator and takes effect (a Commit lands), and the
 * client is told a gRPC error instead (UNAVAILABLE by default). That is the
 * failure after which the Firestore SDK re-runs a transaction callback whose
 * commit already landed; a TCP proxy cannot produce it (cutting the
 * connection after the request leaves it open whether the request arrived).
 *
 * Plain-text HTTP/2 only (h2c), which is what the emulators speak.
 */
export interface GrpcFaultProxy {
  /** `127.0.0.1:PORT` to give clients instead of the target. */
  readonly host: string;
  /**
   * The next `times` calls of `method` (the last path segment, e.g. "Commit")
   * that the target answers with OK are answered with `code` instead.
   */
  loseReplies(method: string, options?: { readonly code?: number; readonly times?: number }): void;
  /**
   * From now on, answers every call itself with this gRPC status and message,
   * without passing it on: a stand-in for a backend that refuses (a
   * PERMISSION_DENIED of real Firestore, which the emulator never answers to
   * the server SDK). null passes calls through again.
   */
  refuseAll(status: { readonly code: number; readonly message: string } | null): void;
  /** How many replies were lost so far, by method. */
  lost(method: string): number;
  /** How many calls of `method` went through, lost or not. */
  calls(method: string): number;
  close(): Promise<void>;
}

/** gRPC status codes used here (grpc/status.proto). */
export const GRPC_STATUS = {
  OK: 0,
  UNKNOWN: 2,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  FAILED_PRECONDITION: 9,
  UNAVAILABLE: 14,
} as const;

const methodOf = (path: string | undefined): string => (path ?? '').split('/').pop() ?? '';

/** grpc-message as the gRPC HTTP/2 spec has it: percent-encoded outside printable ASCII, and '%' itself. */
const grpcMessage = (text: string): string =>
  Array.from(Buffer.from(text, 'utf8'))
    .map((b) =>
      b >= 0x20 && b <= 0x7e && b !== 0x25
        ? String.fromCharCode(b)
        : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
    )
    .join('');

export async function startGrpcFaultProxy(target: string): Promise<GrpcFaultProxy> {
  const armed = new Map<string, { code: number; times: number }>();
  const lostCount = new Map<string, number>();
  const callCount = new Map<string, number>();
  let refusal: { readonly code: number; readonly message: string } | null = null;

  const relay = h2Relay(target);
  const { server } = relay;
  const session = (): http2.ClientHttp2Session => relay.session();
  server.on('stream', (down, headers) => {
    const method = methodOf(headers[':path']);
    callCount.set(method, (callCount.get(method) ?? 0) + 1);
    if (refusal !== null) {
      down.resume();
      down.respond(
        {
          ':status': 200,
          'content-type': 'application/grpc',
          'grpc-status': String(refusal.code),
          'grpc-message': grpcMessage(refusal.message),
        },
        { endStream: true },
      );
      return;
    }
    const up = session().request(forwardable(headers));
    down.pipe(up);
    down.on('error', () => up.close(http2.constants.NGHTTP2_CANCEL));
    down.on('close', () => {
      if (!up.closed) up.close(http2.constants.NGHTTP2_CANCEL);
    });
    up.on('error', () => {
      if (!down.closed) down.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    });
    up.on('response', (upHeaders, flags) => {
      // A trailers-only answer (an error): the status is in these headers and the stream ends with them.
      const trailersOnly =
        (flags & http2.constants.NGHTTP2_FLAG_END_STREAM) !== 0 || upHeaders['grpc-status'] !== undefined;
      const fault = armed.get(method);
      if (fault !== undefined && fault.times > 0 && !trailersOnly) {
        // Let the answer arrive in full (the call took effect), then replace it with the error.
        up.resume();
        // @types/node has no typed 'trailers' overload; Node passes the trailer headers (and flags).
        up.on('trailers', (trailers: http2.IncomingHttpHeaders) => {
          if (String(trailers['grpc-status']) !== String(GRPC_STATUS.OK) || fault.times <= 0) {
            down.respond(responseHeaders(upHeaders), { waitForTrailers: true });
            down.once('wantTrailers', () => down.sendTrailers(responseHeaders(trailers)));
            down.end();
            return;
          }
          fault.times -= 1;
          lostCount.set(method, (lostCount.get(method) ?? 0) + 1);
          down.respond(
            {
              ':status': 200,
              'content-type': 'application/grpc',
              'grpc-status': String(fault.code),
              'grpc-message': grpcMessage(`injected: the ${method} reply was lost after it took effect`),
            },
            { endStream: true },
          );
        });
        return;
      }
      if (trailersOnly) {
        down.respond(responseHeaders(upHeaders), { endStream: true });
        return;
      }
      let trailers: http2.OutgoingHttpHeaders = {};
      up.on('trailers', (t: http2.IncomingHttpHeaders) => {
        trailers = responseHeaders(t);
      });
      down.respond(responseHeaders(upHeaders), { waitForTrailers: true });
      down.on('wantTrailers', () => down.sendTrailers(trailers));
      up.pipe(down);
    });
  });
  const host = await listenOnLoopback(server);

  return {
    host,
    loseReplies(method, options = {}) {
      armed.set(method, { code: options.code ?? GRPC_STATUS.UNAVAILABLE, times: options.times ?? 1 });
    },
    refuseAll(status) {
      refusal = status;
    },
    lost: (method) => lostCount.get(method) ?? 0,
    calls: (method) => callCount.get(method) ?? 0,
    close: () => relay.close(),
  };
}
