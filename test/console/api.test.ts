import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../functions/src/config';
import type { Engine } from '../../functions/src/engine/engine';
import { INBOX } from '../../functions/src/inbox/document';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { relayOne } from '../../functions/src/relay/relay-one';
import { createRuntime } from '../../functions/src/runtime';
import type { ServedFunction } from '../../tools/local/serve-function';
import { inboxConsoleFunctionWith } from '../../functions/src/wiring';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed, storeUnreadable } from '../support/inbox';
import { waitFor } from '../support/wait';
import { GCLOUD_CLIENT, type IamConsole, serveIamConsole } from '../support/console-iam';
import { createSigner } from '../support/tokens';
import { FIXTURE_APP_SUMMARY, FIXTURE_ENV } from '../support/app';

/**
 * inboxConsole over HTTP against the Firestore emulator. With iam access it
 * is served as deployed (dist/ under the Functions Framework CLI,
 * configured by its environment alone; requires `npm run build`): tokens
 * are verified for real by google-auth-library, against the keys of a local
 * signer fetched from a local certs server (INBOX_CONSOLE_OIDC_*), as
 * Google's are in production. The page's files and local access are tested
 * on the same handler in this process (the Functions Framework's own
 * server on a loopback port), with a folder of files of the test's own.
 */
const { db, projectId } = freshFirestores().project('console-api');
const VIEWER = 'viewer@example.com';
const REPAIRER = 'repairer@example.com';
const HOUR = 3_600_000;

let engine: Engine;
let iamConsole: IamConsole;
let issuer: string;
let iam: ServedFunction;
let files: Server;
let local: Server;
let iamUrl: string;
let filesUrl: string;
let localUrl: string;

const assets = mkdtempSync(join(tmpdir(), 'console-assets-'));
writeFileSync(join(assets, 'index.html'), '<!doctype html><title>inbox console</title>');
writeFileSync(join(assets, 'console.js'), 'console.log("page")');
writeFileSync(join(assets, 'notes.ts'), 'server source');
mkdirSync(join(assets, 'fonts'));
writeFileSync(join(assets, 'fonts', 'bpmn.woff2'), 'font');
writeFileSync(join(tmpdir(), 'console-secret.json'), '{"secret":true}');

const listen = (server: Server): Promise<string> =>
  new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
  );
const close = (server: Server | undefined): Promise<void> =>
  new Promise((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));

function serve(name: string, env: Record<string, string>): Server {
  const config = loadConfig({ ...FIXTURE_ENV, GOOGLE_CLOUD_PROJECT: projectId, ...env });
  const runtime = { ...createRuntime(config), db: () => db, engine: async () => engine };
  http(name, inboxConsoleFunctionWith(assets)(config, runtime));
  return getTestServer(name);
}

const token = (email: string, claims: Record<string, unknown> = {}): string => iamConsole.token(email, claims);
const bearer = (jwt: string): Record<string, string> => ({ 'x-serverless-authorization': `Bearer ${jwt}` });
const REPAIR_HEADERS = { 'content-type': 'application/json', 'x-inbox-console': '1', 'sec-fetch-site': 'same-origin' };

async function call(
  path: string,
  init: RequestInit = {},
): Promise<{ status: number; type: string; body: Record<string, unknown> }> {
  const res = await fetch(`${iamUrl}${path}`, init);
  const type = res.headers.get('content-type') ?? '';
  const text = await res.text();
  return {
    status: res.status,
    type,
    body: type.includes('json') ? (JSON.parse(text) as Record<string, unknown>) : { text },
  };
}

const postRepair = (
  email: string,
  body: unknown,
  headers: Record<string, string> = REPAIR_HEADERS,
): ReturnType<typeof call> =>
  call('/api/repairs', {
    method: 'POST',
    headers: { ...bearer(token(email)), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

/** A raw request, for paths fetch would normalise (`..`) and for a Host header of our choosing. */
function raw(
  base: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; type: string; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString('utf8')));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

const doc = async (id: string): Promise<Record<string, unknown>> =>
  (await db.collection(INBOX).doc(id).get()).data() ?? {};

/** A PARKED / NO_WAITING_INSTANCE document: relayed after the buffer window with nobody waiting. */
async function parked(caseId: string): Promise<string> {
  const id = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload(caseId) });
  await relayOne(
    {
      db,
      engine,
      policy: { backoffBaseMs: 60_000, backoffCapMs: 600_000, bufferWindowMs: 86_400_000, errorAfterAttempts: 3 },
      retentionMs: 86_400_000,
      transactionTimeoutMs: 20_000,
      now: () => new Date(Date.now() + 25 * HOUR),
      random: () => 0.5,
    },
    id,
  );
  expect((await doc(id)).status).toBe('PARKED');
  return id;
}

beforeAll(async () => {
  engine = await fixtureEngine();
  // Repairers listed in other letters than the token writes: e-mails compare case-insensitively.
  iamConsole = await serveIamConsole(projectId, { viewers: VIEWER, repairers: 'Repairer@Example.com' });
  ({ issuer, served: iam, url: iamUrl } = iamConsole);
  files = serve('inboxConsoleFilesTest', {});
  filesUrl = await listen(files);
  local = serve('inboxConsoleLocalTest', { INBOX_CONSOLE_ACCESS: 'local' });
  localUrl = await listen(local);
});

afterAll(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await Promise.all([iamConsole?.stop(), close(files), close(local)]);
});

describe('iam access: a verified ID token, then a listed e-mail', () => {
  const now = (): number => Math.floor(Date.now() / 1000);
  test.each<[string, () => Record<string, string>]>([
    ['no token', () => ({})],
    // Same key id, another key: a token it signs fails the signature check, not the key lookup.
    [
      'a token signed by another key',
      () => bearer(createSigner(iamConsole.signer.kid).token({ iss: issuer, aud: GCLOUD_CLIENT, email: REPAIRER })),
    ],
    ['an expired token', () => bearer(token(REPAIRER, { iat: now() - 7200, exp: now() - 3600 }))],
    ['a token for another audience', () => bearer(token(REPAIRER, { aud: 'https://elsewhere.example.test' }))],
    ['a token of another issuer', () => bearer(token(REPAIRER, { iss: 'https://accounts.google.com' }))],
    ['an unsigned token', () => bearer(`${token(REPAIRER).split('.').slice(0, 2).join('.')}.`)],
    [
      'a client-set e-mail header and no token',
      () => ({ 'x-goog-authenticated-user-email': `accounts.google.com:${REPAIRER}` }),
    ],
  ])('%s: 401 JSON', async (_name, headers) => {
    const res = await call('/api/whoami', { headers: headers() });
    expect(res.status).toBe(401);
    expect(res.type).toContain('application/json');
    expect(typeof res.body.error).toBe('string');
  });

  test('a valid token of an e-mail on neither list: 403 naming the lists', async () => {
    const res = await call('/api/whoami', { headers: bearer(token('stranger@example.com')) });
    expect(res.status).toBe(403);
    expect(res.body.error).toContain('INBOX_CONSOLE_VIEWERS');
  });

  test('a valid token through `gcloud run services proxy` (its User-Agent first): 403 saying to run `inbox console`, logged; the page still loads to show it', async () => {
    for (const agent of [
      'cloud-run-proxy/0.5.0 (linux/amd64)',
      'cloud-run-proxy/0.5.0 (linux/amd64) Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0',
    ]) {
      const res = await call('/api/overview', { headers: { ...bearer(token(REPAIRER)), 'user-agent': agent } });
      expect(res.status).toBe(403);
      expect(res.type).toContain('application/json');
      expect(res.body.error).toContain('gcloud run services proxy');
      expect(res.body.error).toContain('inbox console --service inboxconsole --region REGION');
    }
    await waitFor('the refusal in the log', async () =>
      iam.logs.some((l) => l.message === 'console: access refused' && l.reason === 'CLOUD_RUN_PROXY')
        ? true
        : undefined,
    );
    // The same token without the proxy's User-Agent is let in: the refusal is the proxy's, not the account's.
    expect((await call('/api/whoami', { headers: bearer(token(REPAIRER)) })).status).toBe(200);
    expect(
      (await fetch(`${iamUrl}/`, { headers: { 'user-agent': 'cloud-run-proxy/0.5.0 (linux/amd64)' } })).status,
    ).toBe(200);
  });

  test('an unverified e-mail: 403', async () => {
    const res = await call('/api/whoami', { headers: bearer(token(REPAIRER, { email_verified: false })) });
    expect(res.status).toBe(403);
  });

  test('whoami names the verified e-mail, its role and the app the deployment runs; the token may come in Authorization too', async () => {
    const app = FIXTURE_APP_SUMMARY;
    expect((await call('/api/whoami', { headers: bearer(token(VIEWER)) })).body).toEqual({
      id: VIEWER,
      role: 'viewer',
      access: 'iam',
      projectId,
      app,
    });
    expect((await call('/api/whoami', { headers: { authorization: `Bearer ${token(REPAIRER)}` } })).body).toEqual({
      id: REPAIRER,
      role: 'repairer',
      access: 'iam',
      projectId,
      app,
    });
  });
});

describe('repairs', () => {
  let id: string;
  beforeAll(async () => {
    id = await parked('console-requeue');
  });
  const requeue = (requestId: string, preview: boolean): Record<string, unknown> => ({
    request: { kind: 'requeue', id },
    preview,
    requestId,
  });

  test('a viewer may read the document but not repair it: 403, nothing changed', async () => {
    const read = await call(`/api/documents/${id}`, { headers: bearer(token(VIEWER)) });
    expect(read.status).toBe(200);
    expect(read.body.id).toBe(id);
    const res = await postRepair(VIEWER, requeue('viewer-try', false));
    expect(res.status).toBe(403);
    expect(res.body.error).toContain('INBOX_CONSOLE_REPAIRERS');
    expect((await doc(id)).status).toBe('PARKED');
  });

  test.each([
    ['without X-Inbox-Console', { 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' }, 403],
    ['sent cross-site (Sec-Fetch-Site)', { ...REPAIR_HEADERS, 'sec-fetch-site': 'cross-site' }, 403],
    ['from a foreign Origin', { ...REPAIR_HEADERS, origin: 'http://evil.example:8080' }, 403],
    ['as a form (text/plain)', { 'x-inbox-console': '1', 'content-type': 'text/plain' }, 415],
  ])("a repairer's request %s is refused, nothing changed", async (_name, headers, status) => {
    const res = await postRepair(REPAIRER, requeue('csrf-try', false), headers);
    expect(res.status).toBe(status);
    expect(res.type).toContain('application/json');
    expect((await doc(id)).status).toBe('PARKED');
  });

  test("a request from the proxy's page (Origin http://localhost:8080) passes the cross-site check", async () => {
    const res = await postRepair(
      REPAIRER,
      { request: { kind: 'requeue', id }, preview: true },
      { ...REPAIR_HEADERS, origin: 'http://localhost:8080' },
    );
    expect(res.status).toBe(200);
  });

  test("a body that is not JSON: 400 (from the Functions Framework's body parser, before the function runs), nothing changed", async () => {
    const res = await postRepair(REPAIRER, '{"request": ');
    expect(res.status).toBe(400);
    expect((await doc(id)).status).toBe('PARKED');
  });

  test.each([
    ['an unknown kind', { request: { kind: 'explode', id: 'x' }, preview: false }],
    ['no preview flag', { request: { kind: 'requeue', id: 'x' } }],
    ['an extra field', { request: { kind: 'requeue', id: 'x' }, preview: true, force: true }],
    ['a bad request id', { request: { kind: 'requeue', id: 'x' }, preview: true, requestId: '../x' }],
  ])('a malformed body (%s): 400 JSON', async (_name, body) => {
    const res = await postRepair(REPAIRER, body);
    expect(res.status).toBe(400);
    expect(res.type).toContain('application/json');
    expect(typeof res.body.error).toBe('string');
  });

  test('a repairer previews the requeue (nothing changes), confirms it, and is recorded as `by`', async () => {
    const preview = await postRepair(REPAIRER, requeue('console-req-1', true));
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({ kind: 'requeue', preview: true, target: id, by: REPAIRER });
    expect((await doc(id)).status).toBe('PARKED');

    const done = await postRepair(REPAIRER, requeue('console-req-1', false));
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({
      kind: 'requeue',
      preview: false,
      target: id,
      by: REPAIRER,
      alreadyApplied: false,
    });
    const stored = await doc(id);
    expect(stored.status).toBe('OPEN');
    expect((stored.repairs as Array<Record<string, unknown>>).at(-1)).toMatchObject({
      requestId: 'console-req-1',
      kind: 'requeue',
      by: REPAIRER,
      via: 'console',
    });

    // What the document page shows: the same record, through the read operation.
    const view = await call(`/api/documents/${id}`, { headers: bearer(token(VIEWER)) });
    expect((view.body.repairs as Array<Record<string, unknown>>).at(-1)).toMatchObject({
      by: REPAIRER,
      via: 'console',
    });
    // One log line per applied repair, naming who, through what, and the request.
    const lines = iam.logs.filter((l) => l.message === 'operator repair' && l.target === id);
    expect(lines).toEqual([
      expect.objectContaining({
        kind: 'requeue',
        by: REPAIRER,
        via: 'console',
        requestId: 'console-req-1',
        preview: false,
      }),
    ]);
  });

  test('a refused repair (requeue of a document that is OPEN now): 409 with the reason', async () => {
    const res = await postRepair(REPAIRER, requeue('console-req-2', false));
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ refused: true });
    expect(String(res.body.error)).toContain('only PARKED documents can be requeued');
  });
});

describe('raw data: what the receiver kept of an unreadable message', () => {
  const viewer = (): Record<string, string> => bearer(token(VIEWER));
  async function download(
    path: string,
    headers: Record<string, string>,
  ): Promise<{ status: number; type: string; disposition: string; bytes: Buffer }> {
    const res = await fetch(`${iamUrl}${path}`, { headers });
    return {
      status: res.status,
      type: res.headers.get('content-type') ?? '',
      disposition: res.headers.get('content-disposition') ?? '',
      bytes: Buffer.from(await res.arrayBuffer()),
    };
  }

  test('inline: the document view has its text (bytes that are not UTF-8 as U+FFFD, said so); /raw gives a viewer the exact bytes', async () => {
    const data = Buffer.concat([
      Buffer.from('<script>alert(1)</script> {"caseId": '),
      Buffer.from([0xff, 0xfe]),
      Buffer.from(' £'),
    ]);
    const id = await storeUnreadable(db, data);
    const view = await call(`/api/documents/${encodeURIComponent(id)}`, { headers: viewer() });
    expect(view.status).toBe(200);
    expect(view.body.row).toMatchObject({ status: 'PARKED', reason: 'INVALID_PAYLOAD' });
    expect(view.body.raw).toEqual({
      bytes: data.length,
      form: 'DECODED',
      text: '<script>alert(1)</script> {"caseId": \uFFFD\uFFFD £',
      shownBytes: data.length,
      utf8: false,
    });

    const raw = await download(`/api/documents/${encodeURIComponent(id)}/raw`, viewer());
    expect(raw.status).toBe(200);
    expect(raw.type).toBe('application/octet-stream');
    expect(raw.disposition).toMatch(/^attachment; filename="[A-Za-z0-9._-]+\.bin"$/);
    expect(raw.bytes.equals(data)).toBe(true);
  });

  test('in rawChunks (over 256 KiB): the first 64 KiB as text, whole characters, with the whole count; /raw byte for byte', async () => {
    const data = Buffer.from('€'.repeat(200_000), 'utf8');
    const id = await storeUnreadable(db, data);
    expect(await doc(id)).toMatchObject({ rawData: null, rawDataChunks: 1 });
    const view = await call(`/api/documents/${encodeURIComponent(id)}`, { headers: viewer() });
    const { text, ...about } = view.body.raw as { text: string };
    expect(about).toEqual({ bytes: 600_000, form: 'DECODED', shownBytes: 65_535, utf8: true });
    // 21,845 whole characters of three bytes: compared as a fact, so a failure does not print 64 KiB.
    expect({ length: text.length, whole: text === '€'.repeat(21_845) }).toEqual({ length: 21_845, whole: true });
    const raw = await download(`/api/documents/${encodeURIComponent(id)}/raw`, viewer());
    expect(raw.status).toBe(200);
    expect(raw.bytes.equals(data)).toBe(true);

    const many = randomBytes(1_700_000);
    const chunked = await storeUnreadable(db, many);
    expect((await doc(chunked)).rawDataChunks).toBe(3);
    expect((await download(`/api/documents/${encodeURIComponent(chunked)}/raw`, viewer())).bytes.equals(many)).toBe(
      true,
    );
    expect((await call(`/api/documents/${encodeURIComponent(chunked)}`, { headers: viewer() })).body.raw).toMatchObject(
      { bytes: 1_700_000, utf8: false },
    );
  });

  test('a readable document keeps none: 404 saying where its payload is; no document: 404; no token: 401', async () => {
    const readable = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-api-raw-none') });
    expect((await call(`/api/documents/${readable}`, { headers: viewer() })).body.raw).toBeNull();
    const none = await call(`/api/documents/${readable}/raw`, { headers: viewer() });
    expect(none.status).toBe(404);
    expect(none.type).toContain('application/json');
    expect(none.body.error).toContain(`inbox show ${readable} --raw FILE`);
    expect((await call('/api/documents/no-such-document/raw', { headers: viewer() })).status).toBe(404);
    const id = await storeUnreadable(db, Buffer.from('not json'));
    expect((await call(`/api/documents/${id}/raw`)).status).toBe(401);
    expect((await call(`/api/documents/${id}/raw`, { method: 'POST', headers: viewer() })).status).toBe(405);
  });
});

describe('routes', () => {
  const viewer = (): Record<string, string> => bearer(token(VIEWER));
  test.each(['/api/nope', '/api/documents/a/b', '/api'])('unknown API path %s: 404 JSON', async (path) => {
    const res = await call(path, { headers: viewer() });
    expect(res.status).toBe(404);
    expect(res.type).toContain('application/json');
  });

  test('an unknown document: 404 JSON; a bad filter: 400 naming it', async () => {
    expect((await call('/api/documents/no-such-document', { headers: viewer() })).status).toBe(404);
    const bad = await call('/api/documents?status=LOST', { headers: viewer() });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('status');
    expect((await call('/api/instances', { headers: viewer() })).status).toBe(400);
  });

  test('incidents and waiting tokens: the lists of `inbox incidents` and `inbox waiting`, as JSON', async () => {
    const DAY = 24 * HOUR;
    // Two cases wait for the completion of C-api-twin: the second's waiting point is a DUPLICATE_WAITING_POINT incident.
    const waitingSince = async (businessKey: string, at: Date): Promise<string> => {
      const started = await startProcessInstance(db, engine, {
        processKey: 'fixture-process',
        businessKey,
        variables: { caseId: 'C-api-twin' },
        now: at,
      });
      const job = started.jobs[0];
      if (job === undefined) throw new Error('the case started no job');
      await completeJobRun(db, engine, job, {}, at);
      return started.instance.id;
    };
    const old = await waitingSince('C-api-twin-a', new Date(Date.now() - 20 * DAY));
    const fresh = await waitingSince('C-api-twin-b', new Date());

    const incidents = await call('/api/incidents', { headers: viewer() });
    expect(incidents.status).toBe(200);
    const listed = (incidents.body.incidents as Array<Record<string, unknown>>).filter((i) => i.instanceId === fresh);
    expect(listed).toEqual([
      expect.objectContaining({
        reason: 'DUPLICATE_WAITING_POINT',
        businessKey: 'C-api-twin-b',
        instanceStatus: 'INCIDENT',
        resolvedAt: null,
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) as unknown,
      }),
    ]);

    const tooLong = await call('/api/waiting?message=TaskCompleted&olderThan=15d', { headers: viewer() });
    expect(tooLong.status).toBe(200);
    const points = tooLong.body.waitingPoints as Array<Record<string, unknown>>;
    expect(points.map((p) => p.instanceId)).toContain(old);
    expect(points.map((p) => p.instanceId)).not.toContain(fresh);
    expect(points.find((p) => p.instanceId === old)).toMatchObject({
      businessKey: 'C-api-twin-a',
      correlationKey: 'C-api-twin',
      messageName: 'TaskCompleted',
    });
    expect(
      ((await call('/api/waiting', { headers: viewer() })).body.waitingPoints as Array<Record<string, unknown>>).map(
        (p) => p.instanceId,
      ),
    ).toEqual(expect.arrayContaining([old, fresh]));

    // A page of one key, then the next from its cursor: both points of C-api-twin are on the first (a key's points are never split).
    const first = await call('/api/waiting?limit=1', { headers: viewer() });
    expect(typeof first.body.next).toBe('string');
    const second = await call(`/api/waiting?limit=1&after=${String(first.body.next)}`, { headers: viewer() });
    expect(second.status).toBe(200);
  });

  test('an instance: its model with what each element runs, as the engine read it (model.notes)', async () => {
    const started = await startProcessInstance(db, engine, {
      processKey: 'fixture-process',
      businessKey: 'C-api-notes',
      variables: { caseId: 'C-api-notes' },
      now: new Date(),
    });
    const res = await call(`/api/instances/${encodeURIComponent(started.instance.id)}`, { headers: viewer() });
    expect(res.status).toBe(200);
    const model = res.body.model as { processKey: string; xml: string; notes: Array<{ id: string }> };
    expect(model.processKey).toBe('fixture-process');
    expect(model.notes.map((n) => n.id)).toEqual([
      'opened',
      'handOver',
      'waitForCompletion',
      'completionOverdue',
      'escalate',
      'settle',
    ]);
    expect(model.notes).toContainEqual({
      id: 'waitForCompletion',
      kind: 'receiveTask',
      name: 'Wait for completion',
      notes: ['waits for TaskCompleted, key variable caseId'],
    });
  });

  test('a waiting point edited by hand (createdAt no timestamp): 409 naming the document, not a retryable 5xx', async () => {
    const ref = db.collection('correlationKeys').doc('C-api-edited');
    // Found by the page query (shard, waitingFor, waitingSince as the engine writes them), unreadable as a point.
    await ref.set({
      correlationKey: 'C-api-edited',
      open: [],
      shard: 3,
      waitingFor: ['TaskCompleted'],
      waitingSince: new Date(0),
      waiting: [
        {
          messageName: 'TaskCompleted',
          correlationKey: 'C-api-edited',
          processInstanceId: 'pi-x',
          executionId: 'ex-x',
          activityId: 'waitForCompletion',
          createdAt: 'yesterday',
        },
      ],
    });
    try {
      const res = await call('/api/waiting', { headers: viewer() });
      expect(res.status).toBe(409);
      expect(res.body.error).toContain(
        'correlationKeys/C-api-edited holds a waiting point whose createdAt is not a timestamp',
      );
      expect(res.body.refused).toBe(true);
    } finally {
      await ref.delete();
    }
  });

  test.each([
    ['/api/waiting?after=not-a-cursor', 'after: expected the `next` a previous page of /api/waiting gave'],
    ['/api/waiting?message=Nope', 'message: "Nope" is no message the deployed models wait for (TaskCompleted'],
    ['/api/waiting?olderThan=soon', 'olderThan'],
    ['/api/waiting?limit=0', 'limit'],
    ['/api/incidents?all=maybe', 'all'],
    ['/api/incidents?status=OPEN', 'status'],
  ])('%s: 400 naming what is wrong', async (path, error) => {
    const res = await call(path, { headers: viewer() });
    expect(res.status).toBe(400);
    expect(res.body.error).toContain(error);
  });

  test('GET on /api/repairs: 405 naming POST', async () => {
    const res = await fetch(`${iamUrl}/api/repairs`, { headers: viewer() });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  test('the page and its files, by exact name, with their content types', async () => {
    const page = await raw(filesUrl, '/');
    expect(page.status).toBe(200);
    expect(page.type).toContain('text/html');
    expect((await raw(filesUrl, '/assets/console.js')).type).toContain('text/javascript');
    expect((await raw(filesUrl, '/assets/fonts/bpmn.woff2')).type).toBe('font/woff2');
  });

  test.each([
    '/assets/../../console-secret.json',
    '/assets/..%2f..%2fconsole-secret.json',
    '/assets/%2e%2e/%2e%2e/console-secret.json',
    '/assets/notes.ts',
    '/assets/.hidden.js',
    '/assets/missing.js',
    '/assets//etc/passwd',
  ])("no file outside the page's folder or of another kind: %s is 404 JSON", async (path) => {
    const res = await raw(filesUrl, path);
    expect(res.status).toBe(404);
    expect(res.type).toContain('application/json');
    expect(res.body).not.toContain('"secret":true');
  });
});

describe('local access (INBOX_CONSOLE_ACCESS=local)', () => {
  test('a loopback request is let in as the local operator, a repairer, with no token', async () => {
    const res = await raw(localUrl, '/api/whoami');
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({
      id: 'local operator',
      role: 'repairer',
      access: 'local',
      projectId,
      app: FIXTURE_APP_SUMMARY,
    });
  });

  test('a request under a foreign host name (DNS rebinding) is refused, page included', async () => {
    for (const path of ['/api/whoami', '/']) {
      const res = await raw(localUrl, path, { host: 'evil.example' });
      expect(res.status).toBe(403);
      expect(res.type).toContain('application/json');
    }
  });

  test('refused at start-up on Cloud Run', () => {
    expect(() =>
      loadConfig({ GOOGLE_CLOUD_PROJECT: projectId, INBOX_CONSOLE_ACCESS: 'local', K_SERVICE: 'inboxconsole' }),
    ).toThrow(/INBOX_CONSOLE_ACCESS: 'local' is refused on Cloud Run/);
  });
});
