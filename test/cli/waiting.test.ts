import { FieldValue, type Firestore } from '@google-cloud/firestore';
import type { Engine } from '../../functions/src/engine/engine';
import { COLLECTIONS } from '../../functions/src/engine/store/collections';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { relayOne } from '../../functions/src/relay/relay-one';
import { workOrderEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';
import { cliFor } from './run-cli';

/**
 * `inbox waiting` against the emulator: the tokens waiting for a message,
 * oldest first across the 16 shards, a page at a time; and
 * `inbox repair shard-subscriptions` for waiting points stored before they
 * carried a shard.
 */
const DAY = 86_400_000;
const fresh = freshFirestores();
const { db, projectId } = fresh.project('cli-waiting');
const cli = cliFor(projectId);
let engine: Engine;

interface Row {
  instanceId: string;
  businessKey: string | null;
  activityId: string;
  messageName: string;
  correlationKey: string;
  waitingSeconds: number;
  createdAt: string;
}
interface Page {
  waitingPoints: Row[];
  next: string | null;
  unshardedWaitingPoints?: number;
}

/** A work order whose token has waited for WorkOrderCompleted for `age` ms. */
async function waitingFor(on: Firestore, key: string, age: number): Promise<string> {
  const at = new Date(Date.now() - age);
  const started = await startProcessInstance(on, engine, { processKey: 'work-order-execution', businessKey: key, variables: { workOrderId: key }, now: at });
  await completeJobRun(on, engine, started.jobs[0]!, {}, at);
  return started.instance.id;
}

const AGES: ReadonlyArray<readonly [string, number]> = [
  ['WO-w-a', 2 * DAY],
  ['WO-w-b', 20 * DAY],
  ['WO-w-c', 60_000],
  ['WO-w-d', 16 * DAY],
  ['WO-w-e', 4 * DAY],
  ['WO-w-f', 3 * DAY + 60_000],
  ['WO-w-g', 12 * 3_600_000],
];
/** The keys oldest first: what every listing must show, in this order. */
const OLDEST_FIRST = [...AGES].sort((a, b) => b[1] - a[1]).map(([key]) => key);

beforeAll(async () => {
  engine = await workOrderEngine();
  await Promise.all(AGES.map(([key, age]) => waitingFor(db, key, age)));
  // A work order whose completion came: no longer waiting, not listed.
  await waitingFor(db, 'WO-w-done', 30 * DAY);
  const completion = await storePushed(db, { name: 'WorkOrderCompleted', payload: completionPayload('WO-w-done') });
  const relayed = await relayOne({ db, engine, policy: { backoffBaseMs: 60_000, backoffCapMs: 600_000, bufferWindowMs: DAY, errorAfterAttempts: 3 }, retentionMs: DAY, transactionTimeoutMs: 20_000, now: () => new Date(), random: () => 0.5 }, completion);
  expect(relayed).toMatchObject({ kind: 'DECIDED', decision: { kind: 'DONE' } });
});

describe('inbox waiting', () => {
  test('every waiting token, oldest first across shards, with instance, business key, activity, message, key and age', async () => {
    const r = await cli('--json', 'waiting');
    expect(r.code).toBe(0);
    const page = r.json() as Page;
    expect(page.waitingPoints.map((p) => p.businessKey)).toEqual(OLDEST_FIRST);
    expect(page.next).toBeNull();
    expect(page.unshardedWaitingPoints).toBeUndefined();
    const oldest = page.waitingPoints[0] as Row;
    expect(oldest).toMatchObject({ businessKey: 'WO-w-b', activityId: 'waitForCompletion', messageName: 'WorkOrderCompleted', correlationKey: 'WO-w-b' });
    expect(oldest.waitingSeconds).toBeGreaterThanOrEqual(20 * 86_400);
    expect(oldest.waitingSeconds).toBeLessThan(20 * 86_400 + 120);
    const instance = await db.collection(COLLECTIONS.instances).doc(oldest.instanceId).get();
    expect(instance.get('businessKey')).toBe('WO-w-b');
    // They really are in several shards.
    const shards = new Set((await db.collection(COLLECTIONS.eventSubscriptions).get()).docs.map((d) => d.get('shard') as number));
    expect(shards.size).toBeGreaterThan(1);
  });

  test('--older-than 3d: only those waiting at least that long; --message in any case', async () => {
    const r = await cli('--json', 'waiting', '--older-than', '3d', '--message', 'workordercompleted');
    expect(r.code).toBe(0);
    expect((r.json() as Page).waitingPoints.map((p) => p.businessKey)).toEqual(['WO-w-b', 'WO-w-d', 'WO-w-e', 'WO-w-f']);
  });

  test('pages: following `next` with --after walks every point once, in order', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    for (let pages = 1; pages <= 10; pages++) {
      const r = await cli('--json', 'waiting', '--page-size', '2', ...(after === null ? [] : ['--after', after]));
      expect(r.code).toBe(0);
      const page = r.json() as Page;
      seen.push(...page.waitingPoints.map((p) => p.businessKey ?? ''));
      after = page.next;
      if (after === null) break;
    }
    expect(seen).toEqual(OLDEST_FIRST);
  });

  test('for people: a table, ages in days, and the command for the next page', async () => {
    const r = await cli('waiting', '--page-size', '3');
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[1]).toMatch(/instance.*business key.*activity.*message.*correlation key.*waiting since.*waited/);
    expect(r.out).toMatch(/WO-w-b.*waitForCompletion.*WorkOrderCompleted.*WO-w-b.*20 d/);
    expect(r.out).not.toContain('WO-w-a');
    const more = /^more: add --after ([A-Za-z0-9_-]+)$/m.exec(r.out);
    expect(more).not.toBeNull();
    const next = await cli('waiting', '--page-size', '3', '--after', more?.[1] ?? '');
    expect(next.out).toMatch(/WO-w-f/);
    expect(next.out).not.toMatch(/WO-w-b/);
  });

  test('stats shows the level the waiting-too-long alert watches, per message name', async () => {
    const r = await cli('--json', 'stats');
    expect(r.code).toBe(0);
    expect((r.json() as { waiting: unknown }).waiting).toEqual([{ messageName: 'WorkOrderCompleted', oldestWaitingAgeSeconds: expect.any(Number), waitingOverThreshold: 2, thresholdDays: 15 }]);
    const table = await cli('stats');
    expect(table.out).toMatch(/tokens waiting for WorkOrderCompleted 15 d or longer\s*│\s*2/);
    expect(table.out).toMatch(/oldest waiting for WorkOrderCompleted \(age\)\s*│\s*20 d/);
  });

  test.each([
    [['waiting', '--message', 'InvoicePaid'], '--message: expected one of WorkOrderCompleted (the message names the deployed models wait for)'],
    [['waiting', '--older-than', '3w'], '--older-than: expected a duration like 90s, 15m, 2h or 7d'],
    [['waiting', '--page-size', '0'], '--page-size: expected a whole number from 1 to 1000'],
    [['waiting', '--after', 'not-a-cursor'], '--after: expected the cursor a previous page printed'],
  ])('%j: a usage error (exit 2) naming the flag', async (args, message) => {
    const r = await cli(...args);
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
    expect(r.out).toBe('');
  });
});

describe('waiting points stored before they carried a shard', () => {
  const legacy = fresh.project('cli-waiting-legacy');
  const legacyCli = cliFor(legacy.projectId);

  test('are named by `inbox waiting` until `inbox repair shard-subscriptions` gives them one, once', async () => {
    await waitingFor(legacy.db, 'WO-w-legacy-old', 25 * DAY);
    await waitingFor(legacy.db, 'WO-w-legacy-new', DAY);
    const points = (await legacy.db.collection(COLLECTIONS.eventSubscriptions).get()).docs;
    const old = points.find((p) => p.get('correlationKey') === 'WO-w-legacy-old');
    await old?.ref.update({ shard: FieldValue.delete() });

    const before = await legacyCli('--json', 'waiting');
    expect(before.json()).toMatchObject({ waitingPoints: [{ businessKey: 'WO-w-legacy-new' }], unshardedWaitingPoints: 1 });
    const table = await legacyCli('waiting');
    expect(table.out).toContain('1 waiting point(s) carry no shard');
    expect(table.out).toContain('inbox repair shard-subscriptions');

    const dry = await legacyCli('--json', 'repair', 'shard-subscriptions', '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.json()).toEqual({ scanned: 2, sharded: 1, gone: 0, dryRun: true });
    expect((await legacyCli('--json', 'waiting')).json()).toMatchObject({ unshardedWaitingPoints: 1 });

    const run = await legacyCli('repair', 'shard-subscriptions');
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/2\s*│\s*1\s*│\s*0\s*│/);
    const after = (await legacyCli('--json', 'waiting')).json() as Page;
    expect(after.waitingPoints.map((p) => p.businessKey)).toEqual(['WO-w-legacy-old', 'WO-w-legacy-new']);
    expect(after.unshardedWaitingPoints).toBeUndefined();
    expect((await legacyCli('--json', 'repair', 'shard-subscriptions')).json()).toMatchObject({ scanned: 2, sharded: 0 });
  });
});
