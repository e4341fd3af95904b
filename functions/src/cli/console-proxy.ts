/**
 * The proxy of `inbox console`: the operator's browser talks to
 * http://127.0.0.1:PORT/, the proxy forwards to the deployed inboxConsole
 * with the operator's ID token in X-Serverless-Authorization, as Cloud Run
 * IAM expects. Unlike `gcloud run services proxy`, it signs only requests
 * that are addressed to a loopback name: a page of another site whose DNS
 * name was rebound to 127.0.0.1 reaches the port, but its requests carry
 * its own name in Host, and are refused here before any token is added.
 */
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  request as httpRequest,
  type ServerResponse,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { errorMessage } from '../core/errors';
import { type Answer, writeAnswer } from '../http/answer';
import { localRefusal } from '../http/loopback';
import type { IdTokenSource } from './id-token';

export interface ConsoleProxyOptions {
  /** The console's URL (https://…run.app); a path in it is put before every request's. */
  readonly target: URL;
  /** The local port, on 127.0.0.1 only; 0: any free one. */
  readonly port: number;
  readonly tokens: IdTokenSource;
  /** Where refusals and failures are reported, one line each (the CLI: stderr). */
  readonly log: (line: string) => void;
}

export interface ConsoleProxy {
  /** `http://127.0.0.1:PORT/`: the address to open. */
  readonly url: string;
  readonly port: number;
  /** Stops listening and ends open connections. */
  close(): Promise<void>;
}

/**
 * Request headers that stay here: hop-by-hop ones (RFC 9110, 7.6.1), Host
 * (the service's own is sent), credentials of the browser's (the proxy's
 * token is the only one) and cookies, which the browser sends to every
 * port of 127.0.0.1 alike: another local program's would leave the machine.
 */
const KEPT_BACK = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'authorization',
  'x-serverless-authorization',
  'cookie',
]);

/** Response headers that stay with the upstream connection (node frames the body anew). */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** Headers without those in `drop` and those the Connection header names. */
function without(headers: IncomingHttpHeaders, drop: ReadonlySet<string>): OutgoingHttpHeaders {
  const named = new Set(
    String(headers.connection ?? '')
      .split(',')
      .map((n) => n.trim().toLowerCase()),
  );
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !drop.has(name) && !named.has(name)) out[name] = value;
  }
  return out;
}

/** The path upstream: the target's own path (a prefix), then the request's. */
function upstreamPath(target: URL, requested: string): string {
  const prefix = target.pathname.replace(/\/+$/, '');
  return `${prefix}${requested.startsWith('/') ? requested : `/${requested}`}`;
}

/** Answers a request the proxy itself decides (a refusal, a failure) and drains what the client still sends. */
function answer(req: IncomingMessage, res: ServerResponse, a: Answer): void {
  req.resume();
  writeAnswer(res, a);
}

/** Handles one request: refused (403), forwarded with the token, or answered 502. */
function forward(options: ConsoleProxyOptions, req: IncomingMessage, res: ServerResponse): void {
  const { target, tokens, log } = options;
  const line = `${req.method ?? '?'} ${req.url ?? ''}`;
  const why = localRefusal(req.socket.remoteAddress, req.headers.host, 'inbox console');
  if (why !== null) {
    log(
      `inbox console: refused ${line} (Host ${JSON.stringify(req.headers.host ?? '')}, peer ${req.socket.remoteAddress ?? 'unknown'}): ${why}`,
    );
    answer(req, res, { kind: 'reject', status: 403, error: why });
    return;
  }
  tokens().then(
    (token) => {
      const headers = {
        ...without(req.headers, KEPT_BACK),
        host: target.host,
        'x-serverless-authorization': `Bearer ${token}`,
      };
      const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
      const upstream = send({
        protocol: target.protocol,
        hostname: target.hostname,
        port: target.port,
        method: req.method,
        path: upstreamPath(target, req.url ?? '/'),
        headers,
      });
      upstream.on('response', (up) => {
        res.writeHead(up.statusCode ?? 502, up.statusMessage, without(up.headers, HOP_BY_HOP));
        up.pipe(res);
        up.on('error', () => res.destroy());
      });
      upstream.on('error', (err) => {
        // The browser left first (below): nobody to answer, nothing wrong upstream.
        if (res.destroyed) return;
        if (res.headersSent) {
          res.destroy();
          return;
        }
        log(`inbox console: ${line}: ${target.origin} did not answer (${errorMessage(err)})`);
        answer(req, res, {
          kind: 'bad-gateway',
          error: `the console at ${target.origin} did not answer (${errorMessage(err)}): check the URL (--url, or --service and --region) and that the service is deployed`,
        });
      });
      // The browser gave up (closed the tab, navigated away): so does the request upstream.
      res.on('close', () => {
        if (!res.writableFinished) upstream.destroy();
      });
      req.on('error', () => upstream.destroy());
      req.pipe(upstream);
    },
    (err: unknown) => {
      log(`inbox console: ${line}: no ID token (${errorMessage(err)})`);
      answer(req, res, { kind: 'bad-gateway', error: `inbox console has no ID token to send: ${errorMessage(err)}` });
    },
  );
}

/**
 * Starts the proxy on 127.0.0.1:`port`; resolves once it listens. A port
 * that is taken rejects with words that say so.
 */
export async function startConsoleProxy(options: ConsoleProxyOptions): Promise<ConsoleProxy> {
  const server = createServer((req, res) => forward(options, req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(
        new Error(
          err.code === 'EADDRINUSE'
            ? `port ${options.port} on 127.0.0.1 is taken: choose another with --port`
            : `cannot listen on 127.0.0.1:${options.port} (${err.message})`,
        ),
      );
    });
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
