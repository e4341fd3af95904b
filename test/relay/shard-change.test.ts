import type { Firestore } from '@google-cloud/firestore';
import type { Engine } from '../../functions/src/engine/engine';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { shardOf } from '../../functions/src/inbox/ids';
import { createLogger } from '../../functions/src/log';
import { parsePushEnvelope } from '../../functions/src/receiver/envelope';
import { interpretMessage } from '../../functions/src/receiver/interpret';
import { readGauges } from '../../functions/src/relay/gauges';
import { relayBatch, type RelaySummary } from '../../functions/src/relay/relay-batch';
import type { RelayDeps } from '../../functions/src/relay/relay-one';
import { roundsEngine, fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, type PushedMessage, storePushed, TEST_REGISTRY } from '../support/inbox';
import { NO_QUEUES } from '../support/queues';

/**
 * INBOX_SHARDS can change (lowered to save queries, raised for write
 * throughput) and receivers and the relay may run with different values for
 * the minutes of a rolling deploy. A document stored under the old count
 * keeps its `shard`: one at or above the relay's count is in no shard the
 * relay queries. The relay moves such documents into its range at the start
 * of each scheduled call, so they are candidates, seen by the gauges, and
 * no longer hold back the younger documents of their key.
 */
const BEFORE = 16;
const AFTER = 4;
const HOUR = 3_600_000;
const freshDb = freshFirestores();
let fixture: Engine;
let rounds: Engine;

beforeAll(async () => {
  fixture = await fixtureEngine();
  rounds = await roundsEngine();
});

const deps = (db: Firestore, engine: Engine): RelayDeps => ({
  db,
  engine,
  policy: { backoffBaseMs: 60_000, backoffCapMs: 600_000, bufferWindowMs: 24 * HOUR, errorAfterAttempts: 3 },
  retentionMs: 7 * 24 * HOUR,
  transactionTimeoutMs: 10_000,
  now: () => new Date(),
  random: () => 0.5,
});
const relay = (db: Firestore, engine: Engine): Promise<RelaySummary> =>
  relayBatch(
    deps(db, engine),
    NO_QUEUES,
    createLogger(() => undefined),
    { budgetMs: 30_000, parallelism: 4, batchSize: 64, shards: AFTER },
  );

/** The inbox id the receiver gives a message (as storePushed stores it). */
function idOf(message: Pick<PushedMessage, 'name' | 'payload'>): string {
  const parsed = parsePushEnvelope({
    message: {
      data: Buffer.from(JSON.stringify(message.payload)).toString('base64'),
      attributes: { eventType: message.name },
      messageId: 'm',
    },
  });
  if (!parsed.ok) throw new Error(parsed.error);
  const draft = interpretMessage(parsed.envelope, TEST_REGISTRY, { referenceBuckets: [] });
  if (draft.kind !== 'valid') throw new Error(draft.error);
  return draft.id;
}

/** A message stored under the old shard count whose shard `wanted` accepts, found by trying event ids. */
async function storeIn(
  db: Firestore,
  key: string,
  wanted: (shard: number) => boolean,
  make: (eventId: string) => Omit<PushedMessage, 'shards'>,
): Promise<string> {
  for (let n = 0; n < 1_000; n++) {
    // Event ids unique to the key: the same event id under two keys is a KEY_COLLISION (issue 14, item 1).
    const message = make(`${key}-evt-${n}`);
    if (!wanted(shardOf(idOf(message), BEFORE))) continue;
    const id = await storePushed(db, { ...message, shards: BEFORE });
    // The premise, checked on the stored document: it is where the old count put it.
    expect(wanted((await db.collection(INBOX).doc(id).get()).get('shard') as number)).toBe(true);
    return id;
  }
  throw new Error('no event id gives the wanted shard');
}
const stray = (shard: number): boolean => shard >= AFTER;

const status = async (db: Firestore, id: string): Promise<unknown> =>
  (await db.collection(INBOX).doc(id).get()).get('status');

test(`lowered from ${BEFORE} to ${AFTER} shards: documents of shards ${AFTER}..${BEFORE - 1} are moved into range and relayed`, async () => {
  const db = freshDb('shards-lowered');
  const ids: string[] = [];
  for (const key of ['C-s1', 'C-s2', 'C-s3']) {
    const started = await startProcessInstance(db, fixture, {
      processKey: 'fixture-process',
      businessKey: key,
      variables: { caseId: key },
      now: new Date(),
    });
    await completeJobRun(db, fixture, started.jobs[0]!, {}, new Date());
    ids.push(
      await storeIn(db, key, stray, (eventId) => ({
        name: 'TaskCompleted',
        payload: completionPayload(key, { eventId }),
      })),
    );
  }
  const summary = await relay(db, fixture);
  expect(summary).toMatchObject({ resharded: 3, correlated: 3 });
  for (const id of ids) {
    expect(await status(db, id)).toBe('DONE');
    expect((await db.collection(INBOX).doc(id).get()).get('shard')).toBe(shardOf(id, AFTER));
  }
});

test('an older document in a stranded shard no longer holds back the younger ones of its key', async () => {
  const db = freshDb('shards-lane');
  const key = 'K-lane';
  await startProcessInstance(db, rounds, {
    processKey: 'rounds',
    businessKey: key,
    variables: { caseId: key },
    now: new Date(),
  });
  const t0 = Date.now() - HOUR;
  const older = await storeIn(db, key, stray, (eventId) => ({
    name: 'ExecutionStarted',
    payload: { caseId: key, eventId },
    publishTime: new Date(t0),
    receivedAt: new Date(t0),
  }));
  const younger = await storeIn(
    db,
    key,
    (s) => !stray(s),
    (eventId) => ({
      name: 'TaskCompleted',
      payload: completionPayload(key, { eventId }),
      publishTime: new Date(t0 + 1_000),
      receivedAt: new Date(t0 + 1_000),
    }),
  );
  await relay(db, rounds);
  expect([await status(db, older), await status(db, younger)]).toEqual(['DONE', 'DONE']);
});

test('the oldest-OPEN gauge sees a document that waits in a stranded shard', async () => {
  const db = freshDb('shards-gauge');
  // Nobody waits for it: it stays OPEN (retried), an hour old.
  await storeIn(db, 'C-nobody', stray, (eventId) => ({
    name: 'TaskCompleted',
    payload: completionPayload('C-nobody', { eventId }),
    receivedAt: new Date(Date.now() - HOUR),
  }));
  await relay(db, fixture);
  const gauges = await readGauges(db, AFTER, new Date());
  expect(gauges.open).toBe(1);
  expect(gauges.oldestOpenAgeSeconds).toBeGreaterThanOrEqual(3_600);
});

test(`raised from ${AFTER} to ${BEFORE}: nothing to move, everything relayed`, async () => {
  const db = freshDb('shards-raised');
  const started = await startProcessInstance(db, fixture, {
    processKey: 'fixture-process',
    businessKey: 'C-r',
    variables: { caseId: 'C-r' },
    now: new Date(),
  });
  await completeJobRun(db, fixture, started.jobs[0]!, {}, new Date());
  const id = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-r'), shards: AFTER });
  const summary = await relayBatch(
    deps(db, fixture),
    NO_QUEUES,
    createLogger(() => undefined),
    { budgetMs: 30_000, parallelism: 4, batchSize: 64, shards: BEFORE },
  );
  expect(summary).toMatchObject({ resharded: 0, correlated: 1 });
  expect(await status(db, id)).toBe('DONE');
});
