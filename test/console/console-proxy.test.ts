import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startConsoleProxy, type ConsoleProxy } from '../../functions/src/cli/console-proxy';
import { GcloudError, type IdTokenSource } from '../../functions/src/cli/id-token';
import { INBOX } from '../../functions/src/inbox/document';
import { type IamConsole, serveIamConsole } from '../support/console-iam';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed, storeUnreadable } from '../support/inbox';
import { BUILT_CLI } from '../cli/run-cli';
import { waitFor } from '../support/wait';
import { FIXTURE_APP_SUMMARY } from '../support/app';

/**
 * `inbox console`: the deployed console (iam access, served from dist/
 * against the Firestore emulator, tokens of a local signer) behind the
 * CLI's proxy. Between the proxy and the console sits a tap that records
 * what reaches the console, so a test can say what never did. Needs
 * `npm run build` (the console and the CLI are run as built).
 */
const { db, projectId } = freshFirestores().project('console-proxy');
const VIEWER = 'viewer@example.com';
const REPAIRER = 'repairer@example.com';

/** One request as it reached the console. */
interface Tapped {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

let iam: IamConsole;
let tap: Server;
let tapUrl: string;
const tapped: Tapped[] = [];
const held: Array<{ closed: boolean }> = [];

const listen = (server: Server): Promise<string> =>
  new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
const close = (server: Server | undefined): Promise<void> =>
  new Promise((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));

/** A proxy to `target` whose token source and log the test holds. */
async function proxyTo(
  target: string,
  tokens: IdTokenSource,
): Promise<{ proxy: ConsoleProxy; log: string[]; asked: () => number }> {
  const log: string[] = [];
  let asked = 0;
  const proxy = await startConsoleProxy({
    target: new URL(target),
    port: 0,
    tokens: () => {
      asked += 1;
      return tokens();
    },
    log: (line) => log.push(line),
  });
  return { proxy, log, asked: () => asked };
}

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  json(): Record<string, unknown>;
}

/** A request to the proxy with the Host header of our choosing (a browser on a rebound name sends its own); `body` parts are written one by one, chunked. */
function send(
  proxy: ConsoleProxy,
  path: string,
  options: { host?: string; method?: string; headers?: Record<string, string>; body?: readonly string[] } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: proxy.port,
        path,
        method: options.method ?? 'GET',
        headers: { host: options.host ?? `127.0.0.1:${proxy.port}`, ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            json: () => JSON.parse(body.toString('utf8')) as Record<string, unknown>,
          });
        });
      },
    );
    req.on('error', reject);
    for (const part of options.body ?? []) req.write(part);
    req.end();
  });
}

beforeAll(async () => {
  iam = await serveIamConsole(projectId, { viewers: VIEWER, repairers: REPAIRER });
  const upstream = new URL(iam.url);
  tap = createServer((req, res) => {
    tapped.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    // Held: never answered, so a test can leave before the console answers; `held` says when the proxy let go.
    if (req.url === '/api/held') {
      held.push({ closed: false });
      const mine = held[held.length - 1]!;
      res.on('close', () => (mine.closed = true));
      return;
    }
    const on = httpRequest(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    on.on('error', () => res.destroy());
    req.pipe(on);
  });
  tapUrl = await listen(tap);
});

afterAll(async () => {
  await close(tap);
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await iam?.stop();
});

describe('the proxy of `inbox console`', () => {
  let viewer: Awaited<ReturnType<typeof proxyTo>>;
  beforeAll(async () => {
    viewer = await proxyTo(tapUrl, async () => iam.token(VIEWER));
  });
  afterAll(async () => {
    await viewer.proxy.close();
  });

  test("under 127.0.0.1:PORT: forwarded with the token, to the service's own Host; the browser's credentials and cookies stay here", async () => {
    const id = await storeUnreadable(db, Buffer.from('{"caseId": 42}'));
    const before = tapped.length;
    const res = await send(viewer.proxy, `/api/documents/${encodeURIComponent(id)}`, {
      headers: { cookie: 'other-app=secret', authorization: 'Basic b3RoZXI6YXBw' },
    });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ id, row: { reason: 'INVALID_PAYLOAD' }, raw: { text: '{"caseId": 42}' } });
    const seen = tapped.slice(before);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.headers.host).toBe(new URL(tapUrl).host);
    expect(seen[0]?.headers['x-serverless-authorization']).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    expect(seen[0]?.headers.cookie).toBeUndefined();
    expect(seen[0]?.headers.authorization).toBeUndefined();
    // localhost names this machine too.
    expect((await send(viewer.proxy, '/api/whoami', { host: `localhost:${viewer.proxy.port}` })).json()).toMatchObject({
      id: VIEWER,
      role: 'viewer',
      access: 'iam',
    });
  });

  test('under a rebound name (Host rebound.example:PORT): 403 JSON, no token asked for, and the console never sees it', async () => {
    const [before, asked] = [tapped.length, viewer.asked()];
    for (const path of ['/api/documents?status=PARKED', '/', '/api/whoami']) {
      const res = await send(viewer.proxy, path, { host: `rebound.example:${viewer.proxy.port}` });
      expect(res.status).toBe(403);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.json().error).toBe(
        `inbox console answers loopback names only (Host "rebound.example:${viewer.proxy.port}"): open http://127.0.0.1:PORT/`,
      );
    }
    const posted = await send(viewer.proxy, '/api/repairs', {
      host: 'rebound.example',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: ['{"request":'],
    });
    expect(posted.status).toBe(403);
    expect(tapped.length).toBe(before);
    expect(viewer.asked()).toBe(asked);
    expect(viewer.log.filter((l) => l.includes('refused'))).toHaveLength(4);
  });

  test("a POST body streams through, chunked: a repairer's preview is answered by the console", async () => {
    const id = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-proxy-post') });
    const repairer = await proxyTo(tapUrl, async () => iam.token(REPAIRER));
    try {
      const body = JSON.stringify({ request: { kind: 'park', id, text: 'checked by hand' }, preview: true });
      const before = tapped.length;
      const res = await send(repairer.proxy, '/api/repairs', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-inbox-console': '1',
          origin: `http://127.0.0.1:${repairer.proxy.port}`,
          'sec-fetch-site': 'same-origin',
        },
        body: [body.slice(0, 20), body.slice(20)],
      });
      expect(tapped[before]?.headers['transfer-encoding']).toBe('chunked');
      // The console read the whole body: its answer is about this document, from this repairer.
      expect(res.status).toBe(200);
      expect(res.json()).toMatchObject({ kind: 'park', preview: true, target: id, by: REPAIRER });
      expect((await db.collection(INBOX).doc(id).get()).get('status')).toBe('OPEN');
    } finally {
      await repairer.proxy.close();
    }
  });

  test('an answer streams back byte for byte: the raw data of a message in three chunks', async () => {
    const data = Buffer.alloc(1_700_000, 0);
    for (let i = 0; i < data.length; i += 1) data[i] = (i * 7 + (i >> 11)) & 0xff;
    const id = await storeUnreadable(db, data);
    const res = await send(viewer.proxy, `/api/documents/${encodeURIComponent(id)}/raw`);
    expect(res.status).toBe(200);
    expect(res.headers['content-disposition']).toMatch(/^attachment;/);
    expect(res.body.equals(data)).toBe(true);
  });

  test("a browser that leaves before the answer: the request upstream is ended too, and nothing is reported as the console's failure", async () => {
    const req = httpRequest({ host: '127.0.0.1', port: viewer.proxy.port, path: '/api/held' });
    req.on('error', () => undefined);
    req.end();
    await waitFor('the held request at the console', async () => (held.length === 1 ? true : undefined));
    req.destroy();
    await waitFor('the proxy to end it upstream', async () => (held[0]?.closed === true ? true : undefined));
    expect(viewer.log.filter((l) => l.includes('/api/held'))).toEqual([]);
  });

  test('the console unreachable: 502 JSON naming it; no token: 502 JSON saying why', async () => {
    const gone = createServer();
    const goneUrl = await listen(gone);
    await close(gone);
    const down = await proxyTo(goneUrl, async () => iam.token(VIEWER));
    const signedOut = await proxyTo(tapUrl, async () => {
      throw new GcloudError(
        '`gcloud auth print-identity-token` failed: You do not currently have an active account selected.; sign in with `gcloud auth login`',
      );
    });
    try {
      const res = await send(down.proxy, '/api/whoami');
      expect(res.status).toBe(502);
      expect(res.json()).toMatchObject({ retry: true });
      expect(String(res.json().error)).toContain(`the console at ${goneUrl} did not answer`);
      const before = tapped.length;
      const none = await send(signedOut.proxy, '/api/whoami');
      expect(none.status).toBe(502);
      expect(String(none.json().error)).toContain('gcloud auth login');
      expect(tapped.length).toBe(before);
    } finally {
      await Promise.all([down.proxy.close(), signedOut.proxy.close()]);
    }
  });
});

describe('`inbox console` as an operator runs it', () => {
  const bin = mkdtempSync(join(tmpdir(), 'fake-gcloud-'));
  const tokenFile = join(bin, 'token');
  const calls = join(bin, 'calls');
  // gcloud as far as the command uses it: each call recorded, one argument a line.
  writeFileSync(
    join(bin, 'gcloud'),
    [
      '#!/bin/sh',
      'printf "%s\\n" "$@" "--" >> "$FAKE_GCLOUD_CALLS"',
      'case "$1 $2" in',
      '  "auth print-identity-token") if [ -s "$FAKE_GCLOUD_TOKEN" ]; then cat "$FAKE_GCLOUD_TOKEN"; else echo "ERROR: (gcloud.auth.print-identity-token) You do not currently have an active account selected." >&2; exit 1; fi ;;',
      '  "run services") echo "$FAKE_CONSOLE_URL" ;;',
      '  *) echo "unexpected: $*" >&2; exit 2 ;;',
      'esac',
      '',
    ].join('\n'),
  );
  chmodSync(join(bin, 'gcloud'), 0o755);
  const children: ChildProcess[] = [];

  /** The built CLI with that gcloud first on PATH and nothing of a project in its environment. */
  function inbox(...args: string[]): {
    child: ChildProcess;
    out: () => string;
    err: () => string;
    exit: Promise<number | null>;
  } {
    const child = spawn(process.execPath, [BUILT_CLI, ...args], {
      env: {
        PATH: `${bin}:/usr/bin:/bin`,
        HOME: bin,
        FAKE_GCLOUD_TOKEN: tokenFile,
        FAKE_GCLOUD_CALLS: calls,
        FAKE_CONSOLE_URL: tapUrl,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let [out, err] = ['', ''];
    child.stdout.on('data', (c: Buffer) => (out += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    return { child, out: () => out, err: () => err, exit };
  }

  afterAll(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  test('--service and --region: the URL from gcloud, the token from gcloud (no shell), the page under 127.0.0.1; Ctrl-C ends it with 0', async () => {
    writeFileSync(tokenFile, `${iam.token(REPAIRER)}\n`);
    writeFileSync(calls, '');
    const run = inbox('console', '--service', 'inboxconsole', '--region', 'europe-west1', '--port', '0');
    const url = await waitFor(
      'the proxy to say where to open it',
      async () => /open (http:\/\/127\.0\.0\.1:\d+\/)/.exec(run.out())?.[1],
      { timeoutMs: 30_000 },
    );
    expect(run.out()).toContain(`proxies to ${tapUrl} as ${REPAIRER}`);
    const res = await fetch(`${url}api/whoami`);
    expect(await res.json()).toEqual({
      id: REPAIRER,
      role: 'repairer',
      access: 'iam',
      projectId,
      app: FIXTURE_APP_SUMMARY,
    });
    expect(
      readFileSync(calls, 'utf8')
        .split('--\n')
        .filter((c) => c !== ''),
    ).toEqual([
      'run\nservices\ndescribe\ninboxconsole\n--region=europe-west1\n--format=value(status.url)\n',
      'auth\nprint-identity-token\n',
    ]);
    run.child.kill('SIGINT');
    expect(await run.exit).toBe(0);
  });

  test('gcloud signed out: exit 3 and one line that says to sign in; no proxy left listening', async () => {
    writeFileSync(tokenFile, '');
    const run = inbox('console', '--url', tapUrl, '--port', '0');
    expect(await run.exit).toBe(3);
    expect(run.err().trim().split('\n')).toEqual([
      expect.stringMatching(
        /^inbox: no ID token for the console: .*active account selected.*gcloud auth login/,
      ) as unknown,
    ]);
    expect(run.out()).not.toContain('open http');
  });

  test('no console named, or an http:// URL off this machine: usage errors (exit 2)', async () => {
    const none = inbox('console');
    expect(await none.exit).toBe(2);
    expect(none.err()).toContain('--service inboxconsole --region REGION');
    const clear = inbox('console', '--url', 'http://inboxconsole.example.com');
    expect(await clear.exit).toBe(2);
    expect(clear.err()).toContain('https://');
  });
});
