import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { runCli } from '../../functions/src/cli/main';
import type { Explanation } from '../../functions/src/operations/explain-model';
import type { Engine } from '../../functions/src/engine/engine';
import { instanceId } from '../../functions/src/engine/ids';
import { INBOX } from '../../functions/src/inbox/document';
import { PROCESSED } from '../../functions/src/inbox/processed';
import { sweepPayloads } from '../../functions/src/jobs/sweep-payloads';
import { createLogger } from '../../functions/src/log';
import { QUERIES } from '../../functions/src/queries';
import { relayOne, type RelayDeps } from '../../functions/src/relay/relay-one';
import { GRPC_STATUS, type GrpcFaultProxy, startGrpcFaultProxy } from '../../tools/faults/grpc-fault-proxy';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { base64Json, completionEnvelope, envelope } from '../support/push';
import { testReceiver } from '../support/receiver';
import { expireAsTtlWould } from '../support/ttl';
import { type CliRun, spawnCli } from './run-cli';
import { FIXTURE_ENV } from '../support/app';

/**
 * `inbox repair dismiss ID --note TEXT`: a PARKED document becomes DONE,
 * recorded (who, when, note), its processed record written so that the
 * message stays a duplicate; refused for anything not PARKED; applied once
 * under the transaction's re-runs. The case it exists for: a second
 * TaskOpened of a case, parked ALREADY_STARTED, which `inbox
 * explain` explains and points at this command.
 */
const DAY = 86_400_000;
const PROCESS = 'fixture-process';
const firestore = freshFirestores();
const { db, projectId } = firestore.project('cli-dismiss');
let engine: Engine;
let receiver: ReturnType<typeof testReceiver>;
let proxy: GrpcFaultProxy;
let spawned: (...args: string[]) => Promise<CliRun>;

beforeAll(async () => {
  engine = await fixtureEngine();
  receiver = testReceiver(db);
  proxy = await startGrpcFaultProxy(process.env.FIRESTORE_EMULATOR_HOST ?? '');
  spawned = spawnCli({ PATH: process.env.PATH, FIRESTORE_EMULATOR_HOST: proxy.host, GOOGLE_CLOUD_PROJECT: projectId });
});
firestore.beforeTerminate(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await proxy?.close();
});

/** The CLI in process, as `inbox ARGS`, with the fixture app. */
async function cli(...args: string[]): Promise<CliRun> {
  const out: string[] = [];
  const err: string[] = [];
  const io = { out: (t: string) => out.push(t), err: (t: string) => err.push(t), confirm: async () => false };
  const code = await runCli(args, io, { ...process.env, ...FIXTURE_ENV, GOOGLE_CLOUD_PROJECT: projectId });
  return { code, out: out.join('\n'), err: err.join('\n'), json: () => JSON.parse(out.join('\n')) as unknown };
}

const deps = (): RelayDeps => ({
  db,
  engine,
  policy: { backoffBaseMs: 60_000, backoffCapMs: 600_000, bufferWindowMs: DAY, errorAfterAttempts: 3 },
  retentionMs: 7 * DAY,
  transactionTimeoutMs: 20_000,
  now: () => new Date(),
  random: () => 0.5,
});
const opening = (caseId: string, eventId: string, publishTime?: Date): Record<string, unknown> =>
  envelope({
    data: base64Json({ caseId, eventId, openedAt: '2026-12-01T08:00:00Z' }),
    attributes: { eventType: 'TaskOpened' },
    ...(publishTime === undefined ? {} : { publishTime: publishTime.toISOString() }),
  });
const push = async (body: Record<string, unknown>): Promise<Record<string, unknown>> =>
  (await request(receiver.server).post('/').send(body)).body as Record<string, unknown>;
const inboxDoc = async (id: string): Promise<Record<string, unknown>> =>
  (await db.collection(INBOX).doc(id).get()).data() ?? {};

/** A case started by its TaskOpened, and a second TaskOpened (another eventId) parked ALREADY_STARTED: its envelope and id. */
async function secondOpening(key: string): Promise<{ id: string; body: Record<string, unknown>; started: string }> {
  await relayOne(deps(), String((await push(opening(key, 'rel-1'))).id));
  const body = opening(key, 'rel-2');
  const id = String((await push(body)).id);
  expect(await relayOne(deps(), id)).toMatchObject({
    kind: 'DECIDED',
    decision: { kind: 'PARK', reason: 'ALREADY_STARTED' },
  });
  return { id, body, started: instanceId(PROCESS, key) };
}

describe('ALREADY_STARTED, explained and dismissed', () => {
  test('explain says what ALREADY_STARTED means and names the dismiss command', async () => {
    const { id, started } = await secondOpening('C-dis-explain');
    const r = await cli('--json', 'explain', id);
    expect(r.code).toBe(0);
    const e = r.json() as Explanation;
    expect(e.summary).toMatch(/^PARKED \/ ALREADY_STARTED since /);
    expect(e.because[0]).toBe(
      `a start message (TaskOpened starts fixture-process), but the instance for key C-dis-explain exists already: ${started} (now RUNNING)`,
    );
    expect(e.next).toContain(
      `a repeated start (the same business event sent again): npx inbox repair dismiss ${id} --note "repeated start" (DONE, recorded; a redelivery stays a duplicate)`,
    );
  });

  test('--dry-run shows what would change and changes nothing', async () => {
    const { id, started } = await secondOpening('C-dis-dry');
    const before = await inboxDoc(id);
    const r = await cli('--json', 'repair', 'dismiss', id, '--note', 'repeated start', '--by', 'oncall', '--dry-run');
    expect(r.code).toBe(0);
    expect(r.json()).toEqual({
      wouldDismiss: id,
      previousReason: 'ALREADY_STARTED',
      processInstanceId: started,
      by: 'oncall',
      note: 'repeated start',
    });
    expect(await inboxDoc(id)).toEqual(before);
    expect((await db.collection(PROCESSED).doc(id).get()).exists).toBe(false);
  });

  test('dismissed: DONE with who, when and the note, its processed record written; the message stays a duplicate, also after the TTL', async () => {
    const { id, body, started } = await secondOpening('C-dis-real');
    const before = Date.now();
    const r = await cli('repair', 'dismiss', id, '--note', 'planning released it twice', '--by', 'oncall');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain(`dismissed ${id}: DONE, recorded`);
    const doc = await inboxDoc(id);
    expect(doc).toMatchObject({
      status: 'DONE',
      reason: null,
      correlatedVia: 'DISMISSED',
      processInstanceId: started,
      dismissed: { by: 'oncall', note: 'planning released it twice', previousReason: 'ALREADY_STARTED' },
    });
    const at = (doc.dismissed as { at: FirebaseFirestore.Timestamp }).at.toMillis();
    expect(at).toBeGreaterThanOrEqual(before);
    expect((doc.expireAt as FirebaseFirestore.Timestamp).toMillis()).toBe(at + 7 * DAY);
    expect((await db.collection(PROCESSED).doc(id).get()).data()).toMatchObject({
      correlatedVia: 'DISMISSED',
      processInstanceId: started,
      messageName: 'TaskOpened',
    });

    const explained = (await cli('--json', 'explain', id)).json() as Explanation;
    expect(explained.summary).toMatch(/^DONE: dismissed by oncall at .* \(it was PARKED \/ ALREADY_STARTED\)$/);
    expect(explained.because[0]).toBe("the operator's note: planning released it twice");

    expect(await push(body)).toEqual({ outcome: 'duplicate', id });
    await expireAsTtlWould(db, new Date(Date.now() + 8 * DAY));
    expect((await db.collection(INBOX).doc(id).get()).exists).toBe(false);
    expect(await push(body)).toEqual({ outcome: 'duplicate', id });

    const again = await cli('repair', 'dismiss', id, '--note', 'again');
    expect(again.code).toBe(1);
    expect(again.err).toContain(`no inbox document ${id}`);
  });

  test('refused for a document that is not PARKED, and for an unknown id; a note is required', async () => {
    const key = 'C-dis-open';
    const completionId = String((await push(completionEnvelope({ caseId: key }))).id);
    const open = await cli('repair', 'dismiss', completionId, '--note', 'x');
    expect(open.code).toBe(1);
    expect(open.err).toBe(
      `inbox: ${completionId} is OPEN, only a PARKED document can be dismissed: the relay still decides on an OPEN one (\`inbox park ID --reason TEXT\` stops that, then dismiss it)`,
    );
    expect(await inboxDoc(completionId)).toMatchObject({ status: 'OPEN' });
    const { id } = await secondOpening('C-dis-done');
    expect((await cli('repair', 'dismiss', id, '--note', 'done')).code).toBe(0);
    const done = await cli('repair', 'dismiss', id, '--note', 'twice');
    expect(done.code).toBe(1);
    expect(done.err).toContain(`${id} is DONE, only a PARKED document can be dismissed`);
    expect((await cli('repair', 'dismiss', 'no-such-id', '--note', 'x')).code).toBe(1);
    expect((await cli('repair', 'dismiss', id)).code).toBe(2);
    expect((await cli('repair', 'dismiss', id, '--note', '  ')).code).toBe(2);
  });

  test('explain of an OPEN TaskOpened behind an older completion: not held back, its next attempt starts the instance', async () => {
    const key = 'C-dis-next';
    const t0 = new Date(Date.now() - 60_000);
    const completionId = String(
      (await push(completionEnvelope({ caseId: key }, { publishTime: t0.toISOString() }))).id,
    );
    const openingId = String((await push(opening(key, 'rel-1', new Date(t0.getTime() + 1_000)))).id);
    const e = (await cli('--json', 'explain', openingId)).json() as Explanation;
    expect(e.heldBehind).toBeNull();
    expect(e.because).toContain(
      `no token waits for it, and TaskOpened starts process fixture-process (message start event opened): its next attempt starts instance ${instanceId(PROCESS, key)} with business key ${key}`,
    );
    // The completion itself is explained as before: nobody waits for it yet.
    expect(((await cli('--json', 'explain', completionId)).json() as Explanation).heldBehind).toBeNull();
  });
});

describe('a dismissed unreadable message kept in rawChunks', () => {
  /** A 300 KiB message that is not JSON: PARKED / INVALID_PAYLOAD, its raw bytes in rawChunks; dismissed. */
  async function dismissedChunked(): Promise<string> {
    const raw = randomBytes(300 * 1024);
    const id = String(
      (await push(envelope({ data: raw.toString('base64'), attributes: { eventType: 'TaskCompleted' } }))).id,
    );
    expect(await inboxDoc(id)).toMatchObject({ status: 'PARKED', reason: 'INVALID_PAYLOAD', rawDataChunks: 1 });
    expect(await chunksOf(id)).toBe(1);
    expect((await cli('repair', 'dismiss', id, '--note', 'garbage from a test sender', '--by', 'oncall')).code).toBe(0);
    return id;
  }
  const chunksOf = async (id: string): Promise<number> =>
    (await QUERIES.rawChunksOf.build(db, id).count().get()).data().count;
  const noStore = (): never => {
    throw new Error('a chunked document has no object: the sweep must not ask for one');
  };

  test('waits for the payload sweep, not the TTL (which would leave its chunks); the sweep deletes chunks and document', async () => {
    const id = await dismissedChunked();
    const doc = await inboxDoc(id);
    expect(doc).toMatchObject({ status: 'DONE', correlatedVia: 'DISMISSED' });
    expect(doc.expireAt).toBeUndefined();
    const at = (doc.dismissed as { at: FirebaseFirestore.Timestamp }).at.toMillis();
    expect((doc.payloadExpireAt as FirebaseFirestore.Timestamp).toMillis()).toBe(at + 7 * DAY);
    const explained = (await cli('--json', 'explain', id)).json() as Explanation;
    expect(explained.because).toContainEqual(
      expect.stringContaining(
        'its raw bytes are in 1 rawChunks document(s): the payload sweep deletes them with the document, from ',
      ),
    );

    const later = new Date(Date.now() + 8 * DAY);
    await expireAsTtlWould(db, later);
    expect((await db.collection(INBOX).doc(id).get()).exists).toBe(true);
    const summary = await sweepPayloads({ db, store: noStore, log: createLogger(() => undefined), now: later });
    expect(summary).toMatchObject({ deleted: 1, kept: 0, failures: 0 });
    expect((await db.collection(INBOX).doc(id).get()).exists).toBe(false);
    expect(await chunksOf(id)).toBe(0);
  });

  test('inbox purge deletes its chunks with it', async () => {
    const id = await dismissedChunked();
    const r = await cli(
      '--json',
      'purge',
      '--done-before',
      new Date(Date.now() + 60_000).toISOString(),
      '--force',
      '--yes',
    );
    expect(r.err).toBe('');
    expect(r.json()).toMatchObject({ chunked: 1, changedSinceRead: 0 });
    expect((await db.collection(INBOX).doc(id).get()).exists).toBe(false);
    expect(await chunksOf(id)).toBe(0);
  });
});

describe.each([
  ['UNAVAILABLE', GRPC_STATUS.UNAVAILABLE],
  ['DEADLINE_EXCEEDED', GRPC_STATUS.DEADLINE_EXCEEDED],
] as const)('dismiss whose commit landed and then reported %s', (_name, code) => {
  test('applied once and reported as done, not refused as "not PARKED"', async () => {
    const { id } = await secondOpening(`C-dis-retry-${code}`);
    const lost = proxy.lost('Commit');
    proxy.loseReplies('Commit', { code });
    const r = await spawned('--json', 'repair', 'dismiss', id, '--note', 'repeated start', '--by', 'oncall');
    expect(proxy.lost('Commit')).toBe(lost + 1);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({ dismissed: id, previousReason: 'ALREADY_STARTED', alreadyApplied: true });
    const doc = await inboxDoc(id);
    expect(doc).toMatchObject({ status: 'DONE', correlatedVia: 'DISMISSED' });
    expect((doc.repairs as Array<{ kind: string }>).filter((x) => x.kind === 'dismiss')).toHaveLength(1);
  });
});
