import { FieldValue, type Firestore, Timestamp } from '@google-cloud/firestore';
import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import request from 'supertest';
import { shardSubscriptions } from '../../functions/src/cli/shard-subscriptions-command';
import { loadConfig } from '../../functions/src/config';
import type { Engine } from '../../functions/src/engine/engine';
import { correlationKeyDocId } from '../../functions/src/engine/ids';
import type { WaitingPoint } from '../../functions/src/engine/state';
import {
  COLLECTIONS,
  keyIndexFields,
  refs,
  saveCorrelationKey,
  shardOf,
  STATE_SHARDS,
} from '../../functions/src/engine/store/collections';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { runUnitOfWork } from '../../functions/src/engine/store/unit-of-work';
import { createLogger } from '../../functions/src/log';
import { readWaitingGauges, waitedMessageNames } from '../../functions/src/relay/gauges';
import { createRelayHandler } from '../../functions/src/relay/relay-inbox';
import { relayOne, type RelayDeps } from '../../functions/src/relay/relay-one';
import { roundsEngine, fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';
import { eventSubscriptionCount } from '../support/waiting';

/**
 * The waiting gauges (relay/gauges.ts): per message name the deployed models
 * wait for, the age of the oldest waiting token and how many have waited at
 * least INBOX_WAITING_ALERT_DAYS, from waiting points the engine wrote, in
 * whatever shard they are; and the scheduled relay call logging one
 * `waiting gauge` line per name.
 */
const DAY = 86_400_000;
const freshDb = freshFirestores();
let fixture: Engine;
let rounds: Engine;

beforeAll(async () => {
  [fixture, rounds] = await Promise.all([fixtureEngine(), roundsEngine()]);
});

const relayDeps = (db: Firestore, now: Date): RelayDeps => ({
  db,
  engine: fixture,
  policy: { backoffBaseMs: 60_000, backoffCapMs: 600_000, bufferWindowMs: DAY, errorAfterAttempts: 3 },
  retentionMs: 7 * DAY,
  transactionTimeoutMs: 10_000,
  now: () => now,
  random: () => 0.5,
});

/** A case whose token has waited for TaskCompleted since `at` (its job done at that moment). */
async function waitingForCompletion(db: Firestore, key: string, at: Date): Promise<string> {
  const started = await startProcessInstance(db, fixture, {
    processKey: 'fixture-process',
    businessKey: key,
    variables: { caseId: key },
    now: at,
  });
  await completeJobRun(db, fixture, started.jobs[0]!, {}, at);
  return started.instance.id;
}

/** A rounds instance whose token has waited for ExecutionStarted since `at`. */
async function waitingForStart(db: Firestore, key: string, at: Date): Promise<string> {
  return (
    await startProcessInstance(db, rounds, {
      processKey: 'rounds',
      businessKey: key,
      variables: { caseId: key },
      now: at,
    })
  ).instance.id;
}

test('the message names come from the models: receive tasks and message catch events', () => {
  expect(waitedMessageNames(fixture)).toEqual(['TaskCompleted']);
  expect(waitedMessageNames(rounds)).toEqual(['ExecutionStarted', 'TaskCompleted']);
});

test('per message name: the oldest waiting token and the count at or over the threshold, across shards', async () => {
  const db = freshDb('waiting-gauges');
  const now = new Date();
  const ago = (ms: number): Date => new Date(now.getTime() - ms);
  // TaskCompleted: four at or over 15 days (one exactly at it), three younger.
  const ages = [20 * DAY, 18 * DAY, 16 * DAY, 15 * DAY, 14 * DAY, 2 * DAY, 60_000];
  await Promise.all(ages.map((age, i) => waitingForCompletion(db, `C-wg-${i}`, ago(age))));
  // A token that moved on is no waiting point, however old it was: a case started 40 days ago whose completion came.
  await waitingForCompletion(db, 'C-wg-done', ago(40 * DAY));
  const completion = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-wg-done') });
  expect(await relayOne(relayDeps(db, new Date()), completion)).toMatchObject({
    kind: 'DECIDED',
    decision: { kind: 'DONE' },
  });
  // ExecutionStarted: two young ones.
  await Promise.all([waitingForStart(db, 'R-wg-1', ago(3 * DAY)), waitingForStart(db, 'R-wg-2', ago(DAY))]);

  // The key documents the engine wrote carry their shard and waiting fields: nothing for the one-off command to do, and they are spread.
  expect(await shardSubscriptions(db, true)).toMatchObject({ scanned: 9, sharded: 0 });
  const keys = (await db.collection(COLLECTIONS.correlationKeys).get()).docs;
  for (const k of keys) expect(k.get('shard')).toBe(shardOf(k.id));
  expect(new Set(keys.map((k) => k.get('shard') as number)).size).toBeGreaterThan(1);
  expect(await eventSubscriptionCount(db)).toBe(0);

  const gauges = await readWaitingGauges(db, ['ExecutionStarted', 'TaskCompleted', 'PaymentReceived'], 15, now);
  expect(gauges).toEqual([
    {
      messageName: 'ExecutionStarted',
      oldestWaitingAgeSeconds: 3 * 86_400,
      waitingOverThreshold: 0,
      thresholdDays: 15,
    },
    { messageName: 'TaskCompleted', oldestWaitingAgeSeconds: 20 * 86_400, waitingOverThreshold: 4, thresholdDays: 15 },
    { messageName: 'PaymentReceived', oldestWaitingAgeSeconds: null, waitingOverThreshold: 0, thresholdDays: 15 },
  ]);
  // The threshold and the clock are what the caller gives.
  expect((await readWaitingGauges(db, ['TaskCompleted'], 1, now))[0]?.waitingOverThreshold).toBe(6);
  expect((await readWaitingGauges(db, ['TaskCompleted'], 15, new Date(now.getTime() + DAY)))[0]).toMatchObject({
    oldestWaitingAgeSeconds: 21 * 86_400,
    waitingOverThreshold: 5,
  });
});

test('a key whose oldest point is for another message: its point for the name is found, and the count counts keys', async () => {
  const db = freshDb('waiting-gauges-mixed');
  const now = new Date();
  const ago = (days: number): Date => new Date(now.getTime() - days * DAY);
  // Three keys of one shard, as saveCorrelationKey writes them: A waits for Other since 30 days and for M since 5; B for M since 10; C for M since 2.
  const [a, b, c] = keysOfOneShard();
  const point = (key: string, messageName: string, days: number, n: number): WaitingPoint => ({
    messageName,
    correlationKey: key,
    processInstanceId: `i-${key}-${n}`,
    executionId: `e-${key}-${n}`,
    activityId: 'wait',
    createdAt: ago(days),
  });
  await runUnitOfWork(db, async (uow) => {
    saveCorrelationKey(
      uow,
      { correlationKey: a, waiting: [point(a, 'M', 5, 1), point(a, 'Other', 30, 2)], open: [], updatedAt: now },
      now,
    );
    saveCorrelationKey(uow, { correlationKey: b, waiting: [point(b, 'M', 10, 1)], open: [], updatedAt: now }, now);
    saveCorrelationKey(uow, { correlationKey: c, waiting: [point(c, 'M', 2, 1)], open: [], updatedAt: now }, now);
  });
  expect((await refs.correlationKey(db, a).get()).data()).toMatchObject({
    waitingFor: ['M', 'Other'],
    waitingSince: Timestamp.fromDate(ago(30)),
  });

  const [m, other] = await readWaitingGauges(db, ['M', 'Other'], 7, now);
  // The oldest key (A) holds M's point of 5 days; B's of 10 days is older, and C cannot beat it.
  expect(m).toEqual({
    messageName: 'M',
    oldestWaitingAgeSeconds: 10 * 86_400,
    waitingOverThreshold: 2,
    thresholdDays: 7,
  });
  expect(other).toEqual({
    messageName: 'Other',
    oldestWaitingAgeSeconds: 30 * 86_400,
    waitingOverThreshold: 1,
    thresholdDays: 7,
  });
  // No point for M is 20 days old: nothing over that threshold, whatever A's other point.
  expect((await readWaitingGauges(db, ['M'], 20, now))[0]?.waitingOverThreshold).toBe(0);
});

test('key documents written before this version are invisible until `inbox repair shard-subscriptions` gives them their fields', async () => {
  const db = freshDb('waiting-gauges-legacy');
  const now = new Date();
  const ids = await Promise.all(
    [0, 1, 2].map((i) => waitingForCompletion(db, `C-wg-legacy-${i}`, new Date(now.getTime() - 30 * DAY))),
  );
  // As an earlier version stored them: the key document without shard, waitingFor and waitingSince, and an eventSubscriptions document per point.
  const keys = (await db.collection(COLLECTIONS.correlationKeys).get()).docs;
  expect(keys.flatMap((k) => (k.get('waiting') as WaitingPoint[]).map((w) => w.processInstanceId)).sort()).toEqual(
    [...ids].sort(),
  );
  await Promise.all(
    keys.slice(0, 2).map((k) =>
      k.ref.update({
        shard: FieldValue.delete(),
        waitingFor: FieldValue.delete(),
        waitingSince: FieldValue.delete(),
      }),
    ),
  );
  const legacyPoint = { ...(keys[0]?.get('waiting') as WaitingPoint[])[0], shard: 3 };
  await db.collection('eventSubscriptions').doc('legacy').set(legacyPoint);

  expect((await readWaitingGauges(db, ['TaskCompleted'], 15, now))[0]?.waitingOverThreshold).toBe(1);
  expect(await shardSubscriptions(db, true)).toEqual({ scanned: 3, sharded: 2, gone: 0 });
  // A dry run changes nothing; a small page size still walks the whole collection.
  expect((await readWaitingGauges(db, ['TaskCompleted'], 15, now))[0]?.waitingOverThreshold).toBe(1);
  expect(await shardSubscriptions(db, false, 2)).toEqual({ scanned: 3, sharded: 2, gone: 0 });
  expect((await readWaitingGauges(db, ['TaskCompleted'], 15, now))[0]).toMatchObject({
    waitingOverThreshold: 3,
    oldestWaitingAgeSeconds: 30 * 86_400,
  });
  for (const k of (await db.collection(COLLECTIONS.correlationKeys).get()).docs) {
    const fields = keyIndexFields(
      k.id,
      (k.get('waiting') as Array<WaitingPoint & { createdAt: Timestamp }>).map((w) => ({
        ...w,
        createdAt: w.createdAt.toDate(),
      })),
    );
    expect(k.data()).toMatchObject({
      shard: fields.shard,
      waitingFor: fields.waitingFor,
      waitingSince: Timestamp.fromDate(fields.waitingSince ?? new Date(0)),
    });
  }
  // Once is enough: a second run finds nothing; the old eventSubscriptions document is left as it was (nothing reads it).
  expect(await shardSubscriptions(db, false)).toMatchObject({ scanned: 3, sharded: 0 });
  expect((await db.collection('eventSubscriptions').doc('legacy').get()).data()).toEqual(legacyPoint);
  expect(STATE_SHARDS).toBe(16);
});

/** Three correlation keys whose documents fall in one shard. */
function keysOfOneShard(): [string, string, string] {
  const found: string[] = [];
  for (let i = 0; found.length < 3; i++) {
    const key = `C-wg-mixed-${i}`;
    if (shardOf(correlationKeyDocId(key)) === 5) found.push(key);
  }
  return [found[0] ?? '', found[1] ?? '', found[2] ?? ''];
}

test('the scheduled relay call logs one `waiting gauge` line per waited message name, and answers with them in its gauges', async () => {
  const { db, projectId } = freshDb.project('waiting-gauges-relay');
  const now = new Date();
  await waitingForCompletion(db, 'C-wg-relay-old', new Date(now.getTime() - 16 * DAY));
  await waitingForCompletion(db, 'C-wg-relay-new', new Date(now.getTime() - DAY));
  const logs: Array<Record<string, unknown>> = [];
  http(
    'relayWaitingGauges',
    createRelayHandler({
      db: () => db,
      engine: async () => fixture,
      queue: () => ({ enqueue: async () => 'CREATED' }),
      timerQueue: () => ({ enqueue: async () => 'CREATED' }),
      log: createLogger((l) => logs.push(JSON.parse(l) as Record<string, unknown>), { function: 'relayInbox' }),
      relay: loadConfig({
        GOOGLE_CLOUD_PROJECT: projectId,
        INBOX_PUSH_AUTH: 'disabled',
        INBOX_WAITING_ALERT_DAYS: '15',
      }).relay,
      shards: 16,
      now: () => now,
      random: () => 0.5,
    }),
  );
  const res = await request(getTestServer('relayWaitingGauges')).post('/').send({});
  expect(res.status).toBe(200);
  const expected = {
    messageName: 'TaskCompleted',
    oldestWaitingAgeSeconds: 16 * 86_400,
    waitingOverThreshold: 1,
    thresholdDays: 15,
  };
  expect((res.body as { gauges: { waiting: unknown } }).gauges.waiting).toEqual([expected]);
  const lines = logs.filter((l) => l.message === 'waiting gauge');
  expect(lines).toEqual([
    expect.objectContaining({ severity: 'INFO', function: 'relayInbox', waitingGauge: expected }),
  ]);
  // After the summary, so a reader of the log finds the call first.
  expect(logs.findIndex((l) => l.message === 'relay summary')).toBeLessThan(
    logs.indexOf(lines[0] as Record<string, unknown>),
  );
});
