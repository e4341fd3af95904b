import * as http2 from 'node:http2';
import { forwardable, h2Relay, responseHeaders } from './h2-relay';
import { listenOnLoopback } from './listen';

/**
 * One finished gRPC call as it crossed the tap: the method, the request and
 * response messages (each gRPC length-prefixed message, still encoded), and
 * the final status (null when the stream broke before a status arrived).
 */
export interface TappedCall {
  /** Full path, e.g. `/google.firestore.v1.Firestore/Commit`. */
  readonly path: string;
  /** Last path segment, e.g. `Commit`. */
  readonly method: string;
  readonly requests: readonly Buffer[];
  readonly responses: readonly Buffer[];
  /** grpc-status of the answer; null if none arrived (cancelled, connection lost). */
  readonly status: number | null;
  /** Messages the tap could not split (compressed frames): counted, not decoded. */
  readonly compressed: number;
}

/** An HTTP/2 (h2c) gRPC proxy that passes every call through and reports each one when it ends. */
export interface GrpcTap {
  /** `127.0.0.1:PORT` to give clients instead of the target. */
  readonly host: string;
  close(): Promise<void>;
}

/**
 * Splits a byte stream into gRPC messages (1 byte compressed flag, 4 bytes
 * big-endian length, the message), however the DATA frames cut it.
 */
export class GrpcMessageSplitter {
  private buffered: Buffer = Buffer.alloc(0);
  readonly messages: Buffer[] = [];
  compressed = 0;

  push(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    while (this.buffered.length >= 5) {
      const length = this.buffered.readUInt32BE(1);
      if (this.buffered.length < 5 + length) return;
      // A compressed message would need the grpc-encoding codec; the clients here never compress.
      if (this.buffered[0] === 1) this.compressed += 1;
      else this.messages.push(this.buffered.subarray(5, 5 + length));
      this.buffered = this.buffered.subarray(5 + length);
    }
  }
}

/**
 * Starts a pass-through proxy in front of `target` that calls `onCall` with
 * every call once its status is known. The answer is forwarded unchanged and
 * as it streams; the tap only keeps copies of the messages.
 */
export async function startGrpcTap(target: string, onCall: (call: TappedCall) => void): Promise<GrpcTap> {
  const relay = h2Relay(target);
  const { server } = relay;
  const session = (): http2.ClientHttp2Session => relay.session();
  server.on('stream', (down, headers) => {
    const path = String(headers[':path'] ?? '');
    const method = path.split('/').pop() ?? '';
    const requests = new GrpcMessageSplitter();
    const responses = new GrpcMessageSplitter();
    let reported = false;
    const report = (status: number | null): void => {
      if (reported) return;
      reported = true;
      onCall({
        path,
        method,
        requests: requests.messages,
        responses: responses.messages,
        status,
        compressed: requests.compressed + responses.compressed,
      });
    };
    const up = session().request(forwardable(headers));
    down.on('data', (chunk: Buffer) => {
      requests.push(chunk);
      up.write(chunk);
    });
    down.on('end', () => up.end());
    down.on('error', () => up.close(http2.constants.NGHTTP2_CANCEL));
    down.on('close', () => {
      if (!up.closed) up.close(http2.constants.NGHTTP2_CANCEL);
      report(null);
    });
    up.on('error', () => {
      if (!down.closed) down.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
    });
    up.on('response', (upHeaders, flags) => {
      const trailersOnly =
        (flags & http2.constants.NGHTTP2_FLAG_END_STREAM) !== 0 || upHeaders['grpc-status'] !== undefined;
      if (trailersOnly) {
        report(Number(upHeaders['grpc-status'] ?? 2));
        down.respond(responseHeaders(upHeaders), { endStream: true });
        return;
      }
      let trailers: http2.OutgoingHttpHeaders = {};
      up.on('trailers', (t: http2.IncomingHttpHeaders) => {
        trailers = responseHeaders(t);
        report(Number(t['grpc-status'] ?? 2));
      });
      down.respond(responseHeaders(upHeaders), { waitForTrailers: true });
      down.on('wantTrailers', () => down.sendTrailers(trailers));
      up.on('data', (chunk: Buffer) => {
        responses.push(chunk);
        down.write(chunk);
      });
      up.on('end', () => down.end());
    });
  });
  const host = await listenOnLoopback(server);
  return {
    host,
    close: () => relay.close(),
  };
}
