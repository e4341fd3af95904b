import type { CloudTasksClient } from '@google-cloud/tasks';
import { OAuth2Client } from 'google-auth-library';
import { createPublicKey, verify, type JsonWebKey } from 'node:crypto';
import { emulatorClient, startCloudTasksEmulator, type CloudTasksEmulator } from '../src';
import { codeOf, uniqueQueue, PARENT, type Target, startSuite, stopSuite } from './helpers';

/**
 * The OIDC token of a dispatched task, checked by google-auth-library
 * itself (the library runJob's verifier uses) against the keys the emulator
 * serves, never by a re-implementation.
 */
jest.setTimeout(60_000);

const ACCOUNT = 'runner@test-project.iam.gserviceaccount.com';
const GOOGLE_ISSUERS = ['accounts.google.com', 'https://accounts.google.com'];
const INVALID_ARGUMENT = 3;

let emulator: CloudTasksEmulator;
let client: CloudTasksClient;
let target: Target;
let paths = 0;

beforeAll(async () => {
  ({ emulator, client, target } = await startSuite());
});

afterAll(() => stopSuite({ emulator, client, target }));

/**
 * google-auth-library's check of `token`, with the keys fetched from `from`'s key server. Node's
 * fetch for the download: the library's default loads node-fetch with a dynamic import(), which
 * jest's module sandbox refuses (runJob, in a real Node, uses the default: test/engine/run-job-auth).
 */
async function verifiedClaims(
  token: string,
  audience: string,
  issuers: string[],
  from: CloudTasksEmulator = emulator,
): Promise<Record<string, unknown>> {
  const auth = new OAuth2Client({
    endpoints: { oauth2FederatedSignonPemCertsUrl: from.oidc.certsUrl },
    transporterOptions: { fetchImplementation: fetch },
  });
  const { certs } = await auth.getFederatedSignonCertsAsync();
  const ticket = await auth.verifySignedJwtWithCertsAsync(token, certs, audience, issuers);
  return { ...ticket.getPayload() };
}

/** Creates one task with `oidcToken` on a fresh queue of `on` and returns the bearer token its dispatch carried. */
async function dispatchedToken(
  oidcToken: { serviceAccountEmail?: string; audience?: string },
  on = emulator,
  admin = client,
): Promise<{ token: string; url: string }> {
  const queue = uniqueQueue('oidc');
  await admin.createQueue({ parent: PARENT, queue: { name: queue } });
  const url = `${target.base}/job-${++paths}`;
  await admin.createTask({ parent: queue, task: { httpRequest: { url, oidcToken } } });
  await on.idle();
  const received = target.received.find((r) => r.path === new URL(url).pathname);
  const [, token] = /^Bearer (\S+)$/.exec(received?.headers.authorization ?? '') ?? [];
  if (token === undefined) throw new Error(`no bearer token reached ${url}`);
  return { token, url };
}

test("a dispatched task's token passes google-auth-library's check against the emulator's keys, with Google's claims", async () => {
  const before = Math.floor(Date.now() / 1000);
  const { token } = await dispatchedToken({ serviceAccountEmail: ACCOUNT, audience: 'https://run-job.example.test/' });
  const claims = await verifiedClaims(token, 'https://run-job.example.test/', [emulator.oidc.issuer]);
  expect(claims).toEqual({
    iss: emulator.oidc.issuer,
    aud: 'https://run-job.example.test/',
    azp: expect.stringMatching(/^\d{21}$/),
    sub: claims['azp'],
    email: ACCOUNT,
    email_verified: true,
    iat: expect.any(Number),
    exp: Number(claims['iat']) + 3600,
  });
  expect(Number(claims['iat'])).toBeGreaterThanOrEqual(before);
  expect(JSON.parse(Buffer.from(token.split('.')[0] ?? '', 'base64url').toString('utf8'))).toEqual({
    alg: 'RS256',
    kid: emulator.oidc.kid,
    typ: 'JWT',
  });
});

test('without an audience the token is for the task URL, as in Cloud Tasks', async () => {
  const { token, url } = await dispatchedToken({ serviceAccountEmail: ACCOUNT });
  expect(await verifiedClaims(token, url, [emulator.oidc.issuer])).toMatchObject({ aud: url, email: ACCOUNT });
});

test('a changed, expired or misaddressed token is refused by the same check', async () => {
  const { token } = await dispatchedToken({ serviceAccountEmail: ACCOUNT, audience: 'https://a.example.test' });
  const [head, , signature] = token.split('.');
  const forged = Buffer.from(
    JSON.stringify(
      emulator.oidc.claims({ serviceAccountEmail: 'intruder@evil.example', audience: 'https://a.example.test' }),
    ),
  ).toString('base64url');
  await expect(
    verifiedClaims(`${head}.${forged}.${signature}`, 'https://a.example.test', [emulator.oidc.issuer]),
  ).rejects.toThrow(/^Invalid token signature/);
  const stale = emulator.oidc.sign({
    serviceAccountEmail: ACCOUNT,
    audience: 'https://a.example.test',
    issuedAtMs: Date.now() - 2 * 3600_000,
  });
  await expect(verifiedClaims(stale, 'https://a.example.test', [emulator.oidc.issuer])).rejects.toThrow(
    /^Token used too late/,
  );
  await expect(verifiedClaims(token, 'https://b.example.test', [emulator.oidc.issuer])).rejects.toThrow(
    /^Wrong recipient/,
  );
});

test('the keys are served as Google serves its own: a PEM map, a JWK Set, an OpenID configuration', async () => {
  const token = emulator.oidc.sign({ serviceAccountEmail: ACCOUNT, audience: 'https://a.example.test' });
  const [head, body, signature] = token.split('.');
  const jwks = (await (await fetch(emulator.oidc.jwksUrl)).json()) as {
    keys: Array<JsonWebKey & { kid?: string; alg?: string }>;
  };
  expect(jwks.keys.map((k) => [k.kid, k.alg, k.kty])).toEqual([[emulator.oidc.kid, 'RS256', 'RSA']]);
  const key = createPublicKey({ key: jwks.keys[0] as JsonWebKey, format: 'jwk' });
  expect(verify('sha256', Buffer.from(`${head}.${body}`), key, Buffer.from(signature ?? '', 'base64url'))).toBe(true);
  const discovery = (await (await fetch(`${emulator.oidc.issuer}/.well-known/openid-configuration`)).json()) as Record<
    string,
    unknown
  >;
  expect(discovery).toMatchObject({ issuer: emulator.oidc.issuer, jwks_uri: emulator.oidc.jwksUrl });
  const missing = await fetch(`${emulator.oidc.issuer}/nothing`);
  expect(missing.status).toBe(404);
});

test("the issuer is configurable, and a verifier that expects Google's refuses the emulator's tokens", async () => {
  const other = await startCloudTasksEmulator({ oidc: { issuer: 'https://tasks.emulator.test' } });
  const admin = emulatorClient(other.host);
  try {
    const { token } = await dispatchedToken(
      { serviceAccountEmail: ACCOUNT, audience: 'https://a.example.test' },
      other,
      admin,
    );
    expect(await verifiedClaims(token, 'https://a.example.test', ['https://tasks.emulator.test'], other)).toMatchObject(
      { iss: 'https://tasks.emulator.test' },
    );
    await expect(verifiedClaims(token, 'https://a.example.test', GOOGLE_ISSUERS, other)).rejects.toThrow(
      /^Invalid issuer/,
    );
    // Another emulator's key does not sign for this one.
    await expect(
      verifiedClaims(token, 'https://a.example.test', ['https://tasks.emulator.test'], emulator),
    ).rejects.toThrow(/^No pem found/);
  } finally {
    await admin.close();
    await other.stop();
  }
});

test('a task that asks for an OIDC token without a service account is INVALID_ARGUMENT and not created', async () => {
  const queue = uniqueQueue('oidc');
  await client.createQueue({ parent: PARENT, queue: { name: queue } });
  expect(
    await codeOf(
      client.createTask({
        parent: queue,
        task: { httpRequest: { url: target.base, oidcToken: { audience: 'https://a.example.test' } } },
      }),
    ),
  ).toBe(INVALID_ARGUMENT);
  expect(emulator.tasks(queue)).toEqual([]);
});

test("an OAuth token cannot be minted locally: the caller's Authorization header is dropped and none is sent", async () => {
  const queue = uniqueQueue('oauth');
  await client.createQueue({ parent: PARENT, queue: { name: queue } });
  const url = `${target.base}/oauth-${++paths}`;
  await client.createTask({
    parent: queue,
    task: {
      httpRequest: { url, headers: { Authorization: 'Bearer caller' }, oauthToken: { serviceAccountEmail: ACCOUNT } },
    },
  });
  await emulator.idle();
  const received = target.received.find((r) => r.path === new URL(url).pathname);
  expect(received?.headers.authorization).toBeUndefined();
});
