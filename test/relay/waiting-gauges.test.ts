import { FieldValue, type Firestore } from '@google-cloud/firestore';
import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import request from 'supertest';
import { shardSubscriptions } from '../../functions/src/cli/shard-subscriptions';
import { loadConfig } from '../../functions/src/config';
import type { Engine } from '../../functions/src/engine/engine';
import { COLLECTIONS, shardOf, STATE_SHARDS } from '../../functions/src/engine/store/collections';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { createLogger } from '../../functions/src/log';
import { readWaitingGauges, waitedMessageNames } from '../../functions/src/relay/gauges';
import { createRelayHandler } from '../../functions/src/relay/relay-inbox';
import { relayOne, type RelayDeps } from '../../functions/src/relay/relay-one';
import { roundsEngine, workOrderEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';

/**
 * The waiting gauges (relay/gauges.ts): per message name the deployed models
 * wait for, the age of the oldest waiting token and how many have waited at
 * least INBOX_WAITING_ALERT_DAYS, from waiting points the engine wrote, in
 * whatever shard they are; and the scheduled relay call logging one
 * `waiting gauge` line per name.
 */
const DAY = 86_400_000;
const freshDb = freshFirestores();
let workOrders: Engine;
let rounds: Engine;

beforeAll(async () => {
  [workOrders, rounds] = await Promise.all([workOrderEngine(), roundsEngine()]);
});

const relayDeps = (db: Firestore, now: Date): RelayDeps => ({
  db,
  engine: workOrders,
  policy: { backoffBaseMs: 60_000, backoffCapMs: 600_000, bufferWindowMs: DAY, errorAfterAttempts: 3 },
  retentionMs: 7 * DAY,
  transactionTimeoutMs: 10_000,
  now: () => now,
  random: () => 0.5,
});

/** A work order whose token has waited for WorkOrderCompleted since `at` (its job done at that moment). */
async function waitingForCompletion(db: Firestore, key: string, at: Date): Promise<string> {
  const started = await startProcessInstance(db, workOrders, { processKey: 'work-order-execution', businessKey: key, variables: { workOrderId: key }, now: at });
  await completeJobRun(db, workOrders, started.jobs[0]!, {}, at);
  return started.instance.id;
}

/** A rounds instance whose token has waited for ExecutionStarted since `at`. */
async function waitingForStart(db: Firestore, key: string, at: Date): Promise<string> {
  return (await startProcessInstance(db, rounds, { processKey: 'rounds', businessKey: key, variables: { workOrderId: key }, now: at })).instance.id;
}

test('the message names come from the models: receive tasks and message catch events', () => {
  expect(waitedMessageNames(workOrders)).toEqual(['WorkOrderCompleted']);
  expect(waitedMessageNames(rounds)).toEqual(['ExecutionStarted', 'WorkOrderCompleted']);
});

test('per message name: the oldest waiting token and the count at or over the threshold, across shards', async () => {
  const db = freshDb('waiting-gauges');
  const now = new Date();
  const ago = (ms: number): Date => new Date(now.getTime() - ms);
  // WorkOrderCompleted: four at or over 15 days (one exactly at it), three younger.
  const ages = [20 * DAY, 18 * DAY, 16 * DAY, 15 * DAY, 14 * DAY, 2 * DAY, 60_000];
  await Promise.all(ages.map((age, i) => waitingForCompletion(db, `WO-wg-${i}`, ago(age))));
  // A token that moved on is no waiting point, however old it was: a work order started 40 days ago whose completion came.
  await waitingForCompletion(db, 'WO-wg-done', ago(40 * DAY));
  const completion = await storePushed(db, { name: 'WorkOrderCompleted', payload: completionPayload('WO-wg-done') });
  expect(await relayOne(relayDeps(db, new Date()), completion)).toMatchObject({ kind: 'DECIDED', decision: { kind: 'DONE' } });
  // ExecutionStarted: two young ones.
  await Promise.all([waitingForStart(db, 'R-wg-1', ago(3 * DAY)), waitingForStart(db, 'R-wg-2', ago(DAY))]);

  // The points the engine wrote carry their shard: nothing for the one-off command to do, and they are spread.
  expect(await shardSubscriptions(db, true)).toMatchObject({ scanned: 9, sharded: 0 });
  const points = (await db.collection(COLLECTIONS.eventSubscriptions).get()).docs;
  for (const p of points) expect(p.get('shard')).toBe(shardOf(p.id));
  expect(new Set(points.map((p) => p.get('shard') as number)).size).toBeGreaterThan(1);

  const gauges = await readWaitingGauges(db, ['ExecutionStarted', 'WorkOrderCompleted', 'InvoicePaid'], 15, now);
  expect(gauges).toEqual([
    { messageName: 'ExecutionStarted', oldestWaitingAgeSeconds: 3 * 86_400, waitingOverThreshold: 0, thresholdDays: 15 },
    { messageName: 'WorkOrderCompleted', oldestWaitingAgeSeconds: 20 * 86_400, waitingOverThreshold: 4, thresholdDays: 15 },
    { messageName: 'InvoicePaid', oldestWaitingAgeSeconds: null, waitingOverThreshold: 0, thresholdDays: 15 },
  ]);
  // The threshold and the clock are what the caller gives.
  expect((await readWaitingGauges(db, ['WorkOrderCompleted'], 1, now))[0]?.waitingOverThreshold).toBe(6);
  expect((await readWaitingGauges(db, ['WorkOrderCompleted'], 15, new Date(now.getTime() + DAY)))[0]).toMatchObject({ oldestWaitingAgeSeconds: 21 * 86_400, waitingOverThreshold: 5 });
});

test('waiting points stored before they carried a shard are invisible until `inbox repair shard-subscriptions` gives them one', async () => {
  const db = freshDb('waiting-gauges-legacy');
  const now = new Date();
  const ids = await Promise.all([0, 1, 2].map((i) => waitingForCompletion(db, `WO-wg-legacy-${i}`, new Date(now.getTime() - 30 * DAY))));
  // As an earlier version stored them: the same document without `shard`.
  const points = (await db.collection(COLLECTIONS.eventSubscriptions).get()).docs;
  expect(points.map((p) => p.get('processInstanceId') as string).sort()).toEqual([...ids].sort());
  await Promise.all(points.slice(0, 2).map((p) => p.ref.update({ shard: FieldValue.delete() })));

  expect((await readWaitingGauges(db, ['WorkOrderCompleted'], 15, now))[0]?.waitingOverThreshold).toBe(1);
  expect(await shardSubscriptions(db, true)).toEqual({ scanned: 3, sharded: 2, gone: 0 });
  // A dry run changes nothing; a small page size still walks the whole collection.
  expect((await readWaitingGauges(db, ['WorkOrderCompleted'], 15, now))[0]?.waitingOverThreshold).toBe(1);
  expect(await shardSubscriptions(db, false, 2)).toEqual({ scanned: 3, sharded: 2, gone: 0 });
  expect((await readWaitingGauges(db, ['WorkOrderCompleted'], 15, now))[0]).toMatchObject({ waitingOverThreshold: 3, oldestWaitingAgeSeconds: 30 * 86_400 });
  for (const p of (await db.collection(COLLECTIONS.eventSubscriptions).get()).docs) expect(p.get('shard')).toBe(shardOf(p.id));
  // Once is enough: a second run finds nothing.
  expect(await shardSubscriptions(db, false)).toMatchObject({ scanned: 3, sharded: 0 });
  expect(STATE_SHARDS).toBe(16);
});

test('the scheduled relay call logs one `waiting gauge` line per waited message name, and answers with them in its gauges', async () => {
  const { db, projectId } = freshDb.project('waiting-gauges-relay');
  const now = new Date();
  await waitingForCompletion(db, 'WO-wg-relay-old', new Date(now.getTime() - 16 * DAY));
  await waitingForCompletion(db, 'WO-wg-relay-new', new Date(now.getTime() - DAY));
  const logs: Array<Record<string, unknown>> = [];
  http('relayWaitingGauges', createRelayHandler({
    db: () => db,
    engine: async () => workOrders,
    queue: () => ({ enqueue: async () => 'CREATED' }),
    timerQueue: () => ({ enqueue: async () => 'CREATED' }),
    log: createLogger((l) => logs.push(JSON.parse(l) as Record<string, unknown>), { function: 'relayInbox' }),
    relay: loadConfig({ GOOGLE_CLOUD_PROJECT: projectId, INBOX_PUSH_AUTH: 'disabled', INBOX_WAITING_ALERT_DAYS: '15' }).relay,
    shards: 16,
    now: () => now,
    random: () => 0.5,
  }));
  const res = await request(getTestServer('relayWaitingGauges')).post('/').send({});
  expect(res.status).toBe(200);
  const expected = { messageName: 'WorkOrderCompleted', oldestWaitingAgeSeconds: 16 * 86_400, waitingOverThreshold: 1, thresholdDays: 15 };
  expect((res.body as { gauges: { waiting: unknown } }).gauges.waiting).toEqual([expected]);
  const lines = logs.filter((l) => l.message === 'waiting gauge');
  expect(lines).toEqual([expect.objectContaining({ severity: 'INFO', function: 'relayInbox', waitingGauge: expected })]);
  // After the summary, so a reader of the log finds the call first.
  expect(logs.findIndex((l) => l.message === 'relay summary')).toBeLessThan(logs.indexOf(lines[0] as Record<string, unknown>));
});
