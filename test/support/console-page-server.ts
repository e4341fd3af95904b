/**
 * The built console page (dist/console-page/, `npm run build`) served on
 * 127.0.0.1 the way inboxConsole serves it (`/` the shell, `/assets/<file>`
 * the bundle), with a route table in place of the JSON API: the page alone,
 * tested in a real browser before (and apart from) the real API. Every
 * request is recorded, POST bodies and headers included, so a test can check
 * what the page sent.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';

export const CONSOLE_DIST = join(__dirname, '..', '..', 'dist', 'console-page');

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.eot': 'application/vnd.ms-fontobject',
  '.svg': 'image/svg+xml',
};

/** An answer of the route table. */
export interface Answer {
  readonly status: number;
  readonly body: unknown;
}

/** One API request the page made. */
export interface Recorded {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: unknown;
}

/** `GET /api/overview` → a handler; the path without the query string, which the handler gets as `query`. */
export type Routes = Readonly<
  Record<string, (req: { query: URLSearchParams; body: unknown; path: string }) => Answer | Promise<Answer>>
>;

export interface PageServer {
  readonly url: string;
  readonly requests: Recorded[];
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Route keys may end in `/:id`: `GET /api/instances/:id` matches `/api/instances/<anything without a slash>`. */
function match(routes: Routes, method: string, path: string): Routes[string] | undefined {
  const exact = routes[`${method} ${path}`];
  if (exact !== undefined) return exact;
  const slash = path.lastIndexOf('/');
  return slash > 0 ? routes[`${method} ${path.slice(0, slash)}/:id`] : undefined;
}

export async function servePage(routes: Routes): Promise<PageServer> {
  if (!existsSync(join(CONSOLE_DIST, 'index.html')))
    throw new Error(`${CONSOLE_DIST}/index.html is missing: run npm run build first`);
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const send = (status: number, type: string, body: string | Buffer): void => {
        res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
        res.end(body);
      };
      try {
        if (url.pathname.startsWith('/api/')) {
          const body = await readBody(req);
          requests.push({ method: req.method ?? '', path: url.pathname, headers: req.headers, body });
          const handler = match(routes, req.method ?? '', url.pathname);
          const answer =
            handler === undefined
              ? { status: 404, body: { error: `no route ${req.method ?? ''} ${url.pathname}` } }
              : await handler({ query: url.searchParams, body, path: url.pathname });
          send(answer.status, 'application/json', JSON.stringify(answer.body));
          return;
        }
        const file =
          url.pathname === '/'
            ? 'index.html'
            : url.pathname.startsWith('/assets/')
              ? normalize(url.pathname.slice('/assets/'.length))
              : null;
        if (file === null || file.startsWith('..') || file.includes('/') || !existsSync(join(CONSOLE_DIST, file))) {
          send(404, 'text/plain', 'not found');
          return;
        }
        send(200, TYPES[extname(file)] ?? 'application/octet-stream', readFileSync(join(CONSOLE_DIST, file)));
      } catch (err) {
        send(500, 'application/json', JSON.stringify({ error: String(err) }));
      }
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
