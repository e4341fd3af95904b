import { COLLECTIONS } from '../../functions/src/engine/store/collections';
import { INBOX } from '../../functions/src/inbox/document';
import { uniqueProjectId } from '../support/firestore';

/**
 * firestore.rules against the emulator (the harness starts it with
 * --rules=firestore.rules): a client SDK, signed in or not, can neither read
 * nor write any collection. Client SDKs talk to the same REST/gRPC API; a
 * request without the emulator's owner credential is judged by the rules.
 */
const host = process.env.FIRESTORE_EMULATOR_HOST ?? '';
const projectId = uniqueProjectId('rules');
const base = `http://${host}/v1/projects/${projectId}/databases/(default)/documents`;
const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
/** What a signed-in client's request carries (the emulator does not check the signature). */
const userToken = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ sub: 'user-1', user_id: 'user-1', aud: projectId, iss: `https://securetoken.google.com/${projectId}`, iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 3600, firebase: { sign_in_provider: 'password' } })}.`;

const collections = [INBOX, ...Object.values(COLLECTIONS)];
const callers: Array<[string, Record<string, string>]> = [
  ['an anonymous client', {}],
  ['a signed-in client', { authorization: `Bearer ${userToken}` }],
];

async function write(collection: string, headers: Record<string, string>): Promise<number> {
  const res = await fetch(`${base}/${collection}/probe`, { method: 'PATCH', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ fields: { x: { stringValue: 'y' } } }) });
  await res.arrayBuffer();
  return res.status;
}

beforeAll(async () => {
  // Control: with the owner credential (what the server SDK uses) the same write goes through,
  // so the denials below come from the rules, not from a wrong URL.
  for (const collection of collections) expect(await write(collection, { authorization: 'Bearer owner' })).toBe(200);
});

describe.each(callers)('%s', (_name, headers) => {
  test.each(collections)('cannot write %s', async (collection) => {
    expect(await write(collection, headers)).toBe(403);
  });
  test.each(collections)('cannot read or list %s', async (collection) => {
    const one = await fetch(`${base}/${collection}/probe`, { headers });
    const list = await fetch(`${base}/${collection}`, { headers });
    expect([one.status, list.status]).toEqual([403, 403]);
  });
});
