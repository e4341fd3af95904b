import type { Firestore } from '@google-cloud/firestore';
import type { Engine } from '../../functions/src/engine/engine';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { INBOX } from '../../functions/src/inbox/document';
import { readGauges } from '../../functions/src/relay/gauges';
import { relayOne, type RelayDeps } from '../../functions/src/relay/relay-one';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';

/**
 * The relay's gauges (functions/src/relay/gauges.ts) against known data:
 * exact OPEN and PARKED counts, and the age of the oldest OPEN document
 * (whatever shard it is in; PARKED and DONE documents, even older ones, do
 * not count). A test file of its own: gauges.ts grows other gauges elsewhere.
 */

const SHARDS = 16;
const HOUR = 3_600_000;
let engine: Engine;

beforeAll(async () => {
  engine = await fixtureEngine();
});
const freshDb = freshFirestores();
const deps = (db: Firestore, now: Date): RelayDeps => ({
  db,
  engine,
  policy: { backoffBaseMs: 60_000, backoffCapMs: 600_000, bufferWindowMs: 24 * HOUR, errorAfterAttempts: 3 },
  retentionMs: 7 * 24 * HOUR,
  transactionTimeoutMs: 10_000,
  now: () => now,
  random: () => 0.5,
});

test('exact counts and the age of the oldest OPEN document, across shards', async () => {
  const db = freshDb('gauges');
  const now = new Date();
  const ago = (ms: number): Date => new Date(now.getTime() - ms);

  // OPEN: six, received between 10 s and exactly 2 h ago (one of them retried, so in backoff: still OPEN).
  const openAges = [10_000, 60_000, 5 * 60_000, 30 * 60_000, HOUR, 2 * HOUR];
  const openIds = await Promise.all(
    openAges.map((age, i) =>
      storePushed(db, {
        name: 'TaskCompleted',
        payload: completionPayload(`C-g-open-${i}`),
        receivedAt: ago(age),
        shards: SHARDS,
      }),
    ),
  );
  expect(await relayOne(deps(db, now), openIds[0]!)).toMatchObject({ kind: 'DECIDED', decision: { kind: 'RETRY' } });

  // PARKED: three, older than every OPEN one (nobody waited for 48 h).
  for (let i = 0; i < 3; i++) {
    const id = await storePushed(db, {
      name: 'TaskCompleted',
      payload: completionPayload(`C-g-parked-${i}`),
      receivedAt: ago(48 * HOUR + i),
      shards: SHARDS,
    });
    expect(await relayOne(deps(db, now), id)).toMatchObject({ kind: 'DECIDED', decision: { kind: 'PARK' } });
  }

  // DONE: one, the oldest document of all.
  const started = await startProcessInstance(db, engine, {
    processKey: 'fixture-process',
    businessKey: 'C-g-done',
    variables: { caseId: 'C-g-done' },
    now: ago(80 * HOUR),
  });
  await completeJobRun(db, engine, started.jobs[0]!, {}, ago(80 * HOUR));
  const done = await storePushed(db, {
    name: 'TaskCompleted',
    payload: completionPayload('C-g-done'),
    receivedAt: ago(72 * HOUR),
    shards: SHARDS,
  });
  expect(await relayOne(deps(db, now), done)).toMatchObject({ kind: 'DECIDED', decision: { kind: 'DONE' } });

  // The documents really are spread over several shards (the oldest-OPEN query runs once per shard).
  const shards = new Set(
    (await db.collection(INBOX).where('status', '==', 'OPEN').get()).docs.map((d) => d.get('shard') as number),
  );
  expect(shards.size).toBeGreaterThan(1);

  expect(await readGauges(db, SHARDS, now)).toEqual({
    open: 6,
    parked: 3,
    oldestOpenAgeSeconds: 7_200,
    openIncidents: 0,
    failedJobs: 0,
  });
  // The age follows the clock it is given.
  expect((await readGauges(db, SHARDS, new Date(now.getTime() + 90_000))).oldestOpenAgeSeconds).toBe(7_290);
});

test('nothing OPEN: the age is null', async () => {
  const db = freshDb('gauges-empty');
  const now = new Date();
  const id = await storePushed(db, {
    name: 'TaskCompleted',
    payload: completionPayload('C-g-only'),
    receivedAt: new Date(now.getTime() - 30 * HOUR),
    shards: SHARDS,
  });
  expect(await relayOne(deps(db, now), id)).toMatchObject({ kind: 'DECIDED', decision: { kind: 'PARK' } });
  expect(await readGauges(db, SHARDS, now)).toEqual({
    open: 0,
    parked: 1,
    oldestOpenAgeSeconds: null,
    openIncidents: 0,
    failedJobs: 0,
  });
});
