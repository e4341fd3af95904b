import * as http2 from 'node:http2';

/**
 * What the HTTP/2 (gRPC, h2c) proxies of tools/faults share: one upstream
 * session to the emulator, reopened when it closed; the downstream server
 * with its sessions; header filtering; and a close that ends all of them.
 */
export interface H2Relay {
  readonly server: http2.Http2Server;
  /** The upstream session, connected (again) on demand. */
  session(): http2.ClientHttp2Session;
  close(): Promise<void>;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'proxy-connection']);

/** Request headers as the upstream request takes them: pseudo-headers kept, hop-by-hop headers dropped. */
export function forwardable(headers: http2.IncomingHttpHeaders): http2.OutgoingHttpHeaders {
  const out: http2.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}

/** Response headers or trailers without pseudo-headers other than :status. */
export function responseHeaders(headers: http2.IncomingHttpHeaders): http2.OutgoingHttpHeaders {
  const out: http2.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined && (!name.startsWith(':') || name === ':status')) out[name] = value;
  return out;
}

/** A downstream HTTP/2 server and an upstream session to `target`; the caller handles the server's streams. */
export function h2Relay(target: string): H2Relay {
  let upstream: http2.ClientHttp2Session | null = null;
  const server = http2.createServer();
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
    s.on('error', () => undefined);
  });
  return {
    server,
    session() {
      if (upstream === null || upstream.closed || upstream.destroyed) {
        upstream = http2.connect(`http://${target}`);
        upstream.on('error', () => undefined);
      }
      return upstream;
    },
    async close() {
      upstream?.destroy();
      for (const s of sessions) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
