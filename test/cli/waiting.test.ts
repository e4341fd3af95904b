import { FieldValue, type Firestore } from '@google-cloud/firestore';
import type { Engine } from '../../functions/src/engine/engine';
import type { WaitingPoint } from '../../functions/src/engine/state';
import { COLLECTIONS, refs, saveCorrelationKey } from '../../functions/src/engine/store/collections';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { runUnitOfWork } from '../../functions/src/engine/store/unit-of-work';
import { relayOne } from '../../functions/src/relay/relay-one';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';
import { eventSubscriptionCount } from '../support/waiting';
import { cliFor } from './run-cli';

/**
 * `inbox waiting` against the emulator: the tokens waiting for a message,
 * oldest first across the 16 shards, a page at a time, from the key
 * documents; and `inbox repair shard-subscriptions` for key documents
 * written before they carried the waiting fields.
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
  keyDocumentId: string;
}
interface Page {
  waitingPoints: Row[];
  next: string | null;
}

/** A case whose token has waited for TaskCompleted for `age` ms. */
async function waitingFor(on: Firestore, key: string, age: number): Promise<string> {
  const at = new Date(Date.now() - age);
  const started = await startProcessInstance(on, engine, {
    processKey: 'fixture-process',
    businessKey: key,
    variables: { caseId: key },
    now: at,
  });
  await completeJobRun(on, engine, started.jobs[0]!, {}, at);
  return started.instance.id;
}

const AGES: ReadonlyArray<readonly [string, number]> = [
  ['C-w-a', 2 * DAY],
  ['C-w-b', 20 * DAY],
  ['C-w-c', 60_000],
  ['C-w-d', 16 * DAY],
  ['C-w-e', 4 * DAY],
  ['C-w-f', 3 * DAY + 60_000],
  ['C-w-g', 12 * 3_600_000],
];
/** The keys oldest first: what every listing must show, in this order. */
const OLDEST_FIRST = [...AGES].sort((a, b) => b[1] - a[1]).map(([key]) => key);

beforeAll(async () => {
  engine = await fixtureEngine();
  await Promise.all(AGES.map(([key, age]) => waitingFor(db, key, age)));
  // A case whose completion came: no longer waiting, not listed.
  await waitingFor(db, 'C-w-done', 30 * DAY);
  const completion = await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-w-done') });
  const relayed = await relayOne(
    {
      db,
      engine,
      policy: { backoffBaseMs: 60_000, backoffCapMs: 600_000, bufferWindowMs: DAY, errorAfterAttempts: 3 },
      retentionMs: DAY,
      transactionTimeoutMs: 20_000,
      now: () => new Date(),
      random: () => 0.5,
    },
    completion,
  );
  expect(relayed).toMatchObject({ kind: 'DECIDED', decision: { kind: 'DONE' } });
});

describe('inbox waiting', () => {
  test('every waiting token, oldest first across shards, with instance, business key, activity, message, key and age', async () => {
    const r = await cli('--json', 'waiting');
    expect(r.code).toBe(0);
    const page = r.json() as Page;
    expect(page.waitingPoints.map((p) => p.businessKey)).toEqual(OLDEST_FIRST);
    expect(page.next).toBeNull();
    const oldest = page.waitingPoints[0] as Row;
    expect(oldest).toMatchObject({
      businessKey: 'C-w-b',
      activityId: 'waitForCompletion',
      messageName: 'TaskCompleted',
      correlationKey: 'C-w-b',
      keyDocumentId: refs.correlationKey(db, 'C-w-b').id,
    });
    expect(oldest.waitingSeconds).toBeGreaterThanOrEqual(20 * 86_400);
    expect(oldest.waitingSeconds).toBeLessThan(20 * 86_400 + 120);
    const instance = await db.collection(COLLECTIONS.instances).doc(oldest.instanceId).get();
    expect(instance.get('businessKey')).toBe('C-w-b');
    // They really are in several shards, and only in the key documents.
    const shards = new Set(
      (await db.collection(COLLECTIONS.correlationKeys).get()).docs.map((d) => d.get('shard') as number),
    );
    expect(shards.size).toBeGreaterThan(1);
    expect(await eventSubscriptionCount(db)).toBe(0);
  });

  test('--older-than 3d: only those waiting at least that long; --message in any case', async () => {
    const r = await cli('--json', 'waiting', '--older-than', '3d', '--message', 'taskcompleted');
    expect(r.code).toBe(0);
    expect((r.json() as Page).waitingPoints.map((p) => p.businessKey)).toEqual(['C-w-b', 'C-w-d', 'C-w-e', 'C-w-f']);
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
    expect(r.out).toMatch(/C-w-b.*waitForCompletion.*TaskCompleted.*C-w-b.*20 d/);
    expect(r.out).not.toContain('C-w-a');
    const more = /^more: add --after ([A-Za-z0-9_-]+)$/m.exec(r.out);
    expect(more).not.toBeNull();
    const next = await cli('waiting', '--page-size', '3', '--after', more?.[1] ?? '');
    expect(next.out).toMatch(/C-w-f/);
    expect(next.out).not.toMatch(/C-w-b/);
  });

  test('stats shows the level the waiting-too-long alert watches, per message name', async () => {
    const r = await cli('--json', 'stats');
    expect(r.code).toBe(0);
    expect((r.json() as { waiting: unknown }).waiting).toEqual([
      {
        messageName: 'TaskCompleted',
        oldestWaitingAgeSeconds: expect.any(Number),
        waitingOverThreshold: 2,
        thresholdDays: 15,
      },
    ]);
    const table = await cli('stats');
    expect(table.out).toMatch(/tokens waiting for TaskCompleted 15 d or longer\s*│\s*2/);
    expect(table.out).toMatch(/oldest waiting for TaskCompleted \(age\)\s*│\s*20 d/);
  });

  test.each([
    [
      ['waiting', '--message', 'PaymentReceived'],
      '--message: expected one of TaskCompleted (the message names the deployed models wait for)',
    ],
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

describe('an event-based gateway: several points of one token in one key document', () => {
  const gw = fresh.project('cli-waiting-gateway');
  const gwCli = cliFor(gw.projectId);

  test('are listed together, on one page, each once, and --message picks one', async () => {
    const now = new Date();
    const at = (days: number): Date => new Date(now.getTime() - days * DAY);
    const point = (key: string, messageName: string, days: number): WaitingPoint => ({
      messageName,
      correlationKey: key,
      processInstanceId: `i-${key}`,
      executionId: `e-${key}`,
      activityId: `catch${messageName}`,
      gatewayId: 'gate',
      createdAt: at(days),
    });
    await runUnitOfWork(gw.db, async (uow) => {
      saveCorrelationKey(
        uow,
        {
          correlationKey: 'K-gw',
          waiting: [point('K-gw', 'TaskCompleted', 4), point('K-gw', 'TaskCancelled', 4)],
          open: [],
          updatedAt: now,
        },
        now,
      );
      saveCorrelationKey(
        uow,
        { correlationKey: 'K-one', waiting: [point('K-one', 'TaskCompleted', 2)], open: [], updatedAt: now },
        now,
      );
    });
    const first = (await gwCli('--json', 'waiting', '--page-size', '1')).json() as Page;
    expect(first.waitingPoints.map((p) => [p.correlationKey, p.messageName])).toEqual([
      ['K-gw', 'TaskCancelled'],
      ['K-gw', 'TaskCompleted'],
    ]);
    expect(first.next).not.toBeNull();
    const second = (await gwCli('--json', 'waiting', '--page-size', '1', '--after', first.next ?? '')).json() as Page;
    expect(second.waitingPoints.map((p) => p.correlationKey)).toEqual(['K-one']);
    const byMessage = (
      await gwCli('--json', 'waiting', '--message', 'TaskCompleted', '--older-than', '3d')
    ).json() as Page;
    expect(byMessage.waitingPoints.map((p) => [p.correlationKey, p.messageName])).toEqual([['K-gw', 'TaskCompleted']]);
  });
});

describe('key documents written before they carried the waiting fields', () => {
  const legacy = fresh.project('cli-waiting-legacy');
  const legacyCli = cliFor(legacy.projectId);

  test('are missing from `inbox waiting` until `inbox repair shard-subscriptions` gives them their fields, once', async () => {
    await waitingFor(legacy.db, 'C-w-legacy-old', 25 * DAY);
    await waitingFor(legacy.db, 'C-w-legacy-new', DAY);
    await refs
      .correlationKey(legacy.db, 'C-w-legacy-old')
      .update({ shard: FieldValue.delete(), waitingFor: FieldValue.delete(), waitingSince: FieldValue.delete() });

    const before = (await legacyCli('--json', 'waiting')).json() as Page;
    expect(before.waitingPoints.map((p) => p.businessKey)).toEqual(['C-w-legacy-new']);

    const dry = await legacyCli('--json', 'repair', 'shard-subscriptions', '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.json()).toEqual({ scanned: 2, sharded: 1, gone: 0, dryRun: true });
    expect(((await legacyCli('--json', 'waiting')).json() as Page).waitingPoints).toHaveLength(1);

    const run = await legacyCli('repair', 'shard-subscriptions');
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/2\s*│\s*1\s*│\s*0\s*│/);
    const after = (await legacyCli('--json', 'waiting')).json() as Page;
    expect(after.waitingPoints.map((p) => p.businessKey)).toEqual(['C-w-legacy-old', 'C-w-legacy-new']);
    expect((await legacyCli('--json', 'repair', 'shard-subscriptions')).json()).toMatchObject({
      scanned: 2,
      sharded: 0,
    });
  });
});
