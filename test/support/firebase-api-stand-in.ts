/**
 * A stand-in on 127.0.0.1 for the Google APIs that `firebase deploy --only
 * firestore` calls, so firebase-tools' own deploy code can run end to end
 * without a project. It answers only those calls, keeps what they create
 * (a second deploy sees the first one's rulesets, indexes and fields, as in a
 * real project), and answers anything else 404, recording it in `unexpected`
 * for the test to fail on. It is also an HTTP(S) proxy: a CONNECT to any other
 * host (a call to the real Google) is refused and recorded the same way.
 *
 * It does not compile rules (`projects/P:test` answers "no issues"; the
 * rules themselves are tested against the Firestore emulator in
 * test/security) and it runs no long-running operation.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo } from 'node:net';
import { type Duplex } from 'node:stream';

/** One request the stand-in answered. */
export interface RecordedCall {
  readonly method: string;
  /** Path without the query, e.g. /v1/projects/p/rulesets. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  readonly body: unknown;
  readonly authorization: string | undefined;
}

/** The APIs' resources as the stand-in holds them. */
export interface StandInState {
  readonly rulesets: Map<string, unknown>;
  readonly releases: Map<string, string>;
  readonly indexes: { name: string; queryScope: unknown; fields: { fieldPath: string; order?: string }[] }[];
  readonly fields: Map<string, { name: string; indexConfig: unknown; ttlConfig?: { state: string } }>;
}

/** A running stand-in. */
export interface FirebaseApiStandIn {
  /** http://127.0.0.1:PORT, the value of every origin override and of HTTPS_PROXY. */
  readonly url: string;
  readonly calls: RecordedCall[];
  /** "METHOD path" of every request the stand-in does not serve, and "CONNECT host" of every other host. */
  readonly unexpected: string[];
  readonly state: StandInState;
  close(): Promise<void>;
}

type Handler = (m: RegExpExecArray, call: RecordedCall) => unknown;
const NOT_FOUND = Symbol('not found');

/** Starts the stand-in for one project. */
export async function startFirebaseApiStandIn(project: string): Promise<FirebaseApiStandIn> {
  const calls: RecordedCall[] = [];
  const unexpected: string[] = [];
  const state: StandInState = { rulesets: new Map(), releases: new Map(), indexes: [], fields: new Map() };
  const prefix = `/v1/projects/${project}`;
  const db = `projects/${project}/databases/(default)`;
  const now = (): string => new Date().toISOString();
  const operation = (): { name: string; done: boolean } => ({
    name: `${db}/operations/op-${calls.length}`,
    done: false,
  });
  const body = (call: RecordedCall): Record<string, unknown> =>
    call.body !== null && typeof call.body === 'object' ? (call.body as Record<string, unknown>) : {};

  /** Creates or updates a release of a known ruleset; updating a missing one is 404, after which the CLI creates it. */
  function release(r: Record<string, unknown>, update: boolean): unknown {
    const name = String(r.name);
    const rulesetName = String(r.rulesetName);
    if (update !== state.releases.has(name) || !state.rulesets.has(rulesetName)) return NOT_FOUND;
    state.releases.set(name, rulesetName);
    return { name, rulesetName, createTime: now() };
  }

  // Method, path after /v1/projects/PROJECT, answer. Anything else is unexpected.
  const routes: [string, RegExp, Handler][] = [
    // Cloud Resource Manager: the permission check before a deploy; grants what is asked.
    ['POST', /^:testIamPermissions$/, (_m, c) => ({ permissions: body(c).permissions })],
    // Service Usage: every API is enabled.
    ['GET', /^\/services\/([^/]+)$/, (m) => ({ name: `projects/${project}/services/${m[1]}`, state: 'ENABLED' })],
    // Firestore: the (default) database exists (deploy.sh or the console created it), with what was deployed.
    [
      'GET',
      /^\/databases\/\(default\)$/,
      () => ({ name: db, type: 'FIRESTORE_NATIVE', databaseEdition: 'STANDARD', locationId: 'europe-west1' }),
    ],
    ['GET', /^\/databases\/\(default\)\/collectionGroups\/-\/indexes$/, () => ({ indexes: state.indexes })],
    ['GET', /^\/databases\/\(default\)\/collectionGroups\/-\/fields$/, () => ({ fields: [...state.fields.values()] })],
    [
      'POST',
      /^\/databases\/\(default\)\/collectionGroups\/([^/]+)\/indexes$/,
      (m, c) => {
        const fields = (body(c).fields ?? []) as { fieldPath: string; order?: string }[];
        // The API appends __name__ in the direction of the last field.
        const withName =
          fields.at(-1)?.fieldPath === '__name__'
            ? fields
            : [...fields, { fieldPath: '__name__', order: fields.at(-1)?.order ?? 'ASCENDING' }];
        state.indexes.push({
          name: `${db}/collectionGroups/${m[1]}/indexes/ix-${state.indexes.length + 1}`,
          queryScope: body(c).queryScope,
          fields: withName,
        });
        return operation();
      },
    ],
    [
      'PATCH',
      /^\/databases\/\(default\)\/collectionGroups\/([^/]+)\/fields\/([^/]+)$/,
      (m, c) => {
        const name = `${db}/collectionGroups/${m[1]}/fields/${m[2]}`;
        // updateMask=indexConfig leaves the TTL as it is; no mask replaces the whole field.
        const ttlConfig =
          c.query.updateMask === 'indexConfig'
            ? state.fields.get(name)?.ttlConfig
            : body(c).ttlConfig === undefined
              ? undefined
              : { state: 'CREATING' };
        state.fields.set(name, {
          name,
          indexConfig: body(c).indexConfig,
          ...(ttlConfig === undefined ? {} : { ttlConfig }),
        });
        return operation();
      },
    ],
    // Firebase Rules: the compile check, rulesets, releases.
    ['POST', /^:test$/, () => ({})],
    [
      'GET',
      /^\/releases$/,
      () => ({
        releases: [...state.releases].map(([name, rulesetName]) => ({ name, rulesetName, createTime: now() })),
      }),
    ],
    [
      'POST',
      /^\/rulesets$/,
      (_m, c) => {
        const name = `projects/${project}/rulesets/rs-${state.rulesets.size + 1}`;
        state.rulesets.set(name, body(c).source);
        return { name, source: body(c).source, createTime: now() };
      },
    ],
    [
      'GET',
      /^\/rulesets\/([^/]+)$/,
      (m) => {
        const name = `projects/${project}/rulesets/${m[1]}`;
        return state.rulesets.has(name) ? { name, source: state.rulesets.get(name) } : NOT_FOUND;
      },
    ],
    ['PATCH', /^\/releases\/(.+)$/, (_m, c) => release((body(c).release ?? {}) as Record<string, unknown>, true)],
    ['POST', /^\/releases$/, (_m, c) => release(body(c), false)],
  ];

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      // Through the proxy a request line carries an absolute URL; directly, a path.
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const text = Buffer.concat(chunks).toString('utf8');
      let parsed: unknown;
      try {
        parsed = text === '' ? null : JSON.parse(text);
      } catch {
        parsed = text;
      }
      const call: RecordedCall = {
        method: req.method ?? '',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        body: parsed,
        authorization: req.headers.authorization,
      };
      calls.push(call);
      const rest = call.path.startsWith(prefix) ? call.path.slice(prefix.length) : null;
      let answer: unknown = NOT_FOUND;
      for (const [method, pattern, handler] of routes) {
        const m = rest === null ? null : pattern.exec(rest);
        if (method === call.method && m !== null) {
          answer = handler(m, call);
          break;
        }
      }
      if (answer === NOT_FOUND) {
        // The CLI updates a release first and creates it when that answers 404: the one miss it expects.
        const expectedMiss =
          call.method === 'PATCH' &&
          rest !== null &&
          rest.startsWith('/releases/') &&
          !state.releases.has(`projects/${project}${rest}`);
        if (!expectedMiss) unexpected.push(`${call.method} ${call.path}`);
        res.writeHead(404, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            error: { code: 404, message: `${call.method} ${call.path} not found`, status: 'NOT_FOUND' },
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    });
  });

  // As a proxy: a tunnel to the stand-in itself is served by the same server; any other host is refused.
  server.on('connect', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const { port } = server.address() as AddressInfo;
    if (req.url !== `127.0.0.1:${port}`) {
      unexpected.push(`CONNECT ${req.url ?? ''}`);
      socket.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) socket.unshift(head);
    server.emit('connection', socket);
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    unexpected,
    state,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
