import {
  assertFails,
  initializeTestEnvironment,
  type RulesTestContext,
  type RulesTestEnvironment,
} from '@firebase/rules-unit-testing';
import { setLogLevel } from 'firebase/firestore';
import { COLLECTIONS } from '../../functions/src/engine/store/collections';
import { PROCESSED } from '../../functions/src/inbox/processed';
import { INBOX, RAW_CHUNKS } from '../../functions/src/inbox/document';
import { uniqueProjectId } from '../support/firestore';

/**
 * firestore.rules against the emulator (the harness starts it with
 * --rules=firestore.rules), through the Firebase web SDK a client app would
 * use: signed in as a user or not, it can neither read, list nor write any
 * collection, nor the raw chunks below an inbox document. The test
 * environment does not load rules of its own, so what is judged is the file
 * the emulator was started with.
 */
const [host = '127.0.0.1', port = '8080'] = (process.env.FIRESTORE_EMULATOR_HOST ?? '').split(':');
const projectId = uniqueProjectId('rules');
/** Every collection the server writes, and the subcollection of an inbox document. */
const paths = [INBOX, PROCESSED, ...Object.values(COLLECTIONS), `${INBOX}/probe/${RAW_CHUNKS}`];
let env: RulesTestEnvironment;
/** The client SDK's Firestore (the web SDK, through its namespaced API). */
type ClientDb = ReturnType<RulesTestContext['firestore']>;

beforeAll(async () => {
  // The SDK warns about every denied write; here a denial is the expected answer.
  setLogLevel('error');
  env = await initializeTestEnvironment({ projectId, firestore: { host, port: Number(port) } });
  // Control: with rules switched off (the owner credential the server SDK gets) the probes are written,
  // so the denials below come from the rules, not from a wrong path or a missing document.
  await env.withSecurityRulesDisabled(async (owner) => {
    const db = owner.firestore();
    for (const path of paths) await db.collection(path).doc('probe').set({ x: 'y' });
    for (const path of paths) expect((await db.collection(path).doc('probe').get()).exists).toBe(true);
  });
});
afterAll(async () => {
  await env.cleanup();
});

const callers: Array<[string, () => ClientDb]> = [
  ['a signed-in user', () => env.authenticatedContext('user-1', { email: 'user-1@example.com' }).firestore()],
  ['an unauthenticated client', () => env.unauthenticatedContext().firestore()],
];

/** The error code of a denied call (assertFails throws when the call succeeds). */
const denied = async (call: Promise<unknown>): Promise<string> =>
  ((await assertFails(call)) as { code?: string }).code ?? 'no code';

describe.each(callers)('%s', (_name, client) => {
  test.each(paths)('cannot read or list %s', async (path) => {
    const db = client();
    expect(await denied(db.collection(path).doc('probe').get())).toBe('permission-denied');
    expect(await denied(db.collection(path).get())).toBe('permission-denied');
  });
  test.each(paths)('cannot create, update or delete in %s', async (path) => {
    const db = client();
    expect(await denied(db.collection(path).doc('new').set({ x: 'y' }))).toBe('permission-denied');
    expect(await denied(db.collection(path).doc('probe').update({ x: 'z' }))).toBe('permission-denied');
    expect(await denied(db.collection(path).doc('probe').delete())).toBe('permission-denied');
  });
});
