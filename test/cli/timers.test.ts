import { join } from 'node:path';
import type { Firestore, Timestamp } from '@google-cloud/firestore';
import type { Engine } from '../../functions/src/engine/engine';
import { loadEngine } from '../../functions/src/engine/deployed';
import type { TimerState } from '../../functions/src/engine/state';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import { modelsDirWith } from '../support/app';
import { freshFirestores } from '../support/firestore';
import { cliFor } from './run-cli';

/**
 * `inbox timers` and `inbox repair fire-timer` against the emulator, with a
 * deployed model that has a timer (test/fixtures/bpmn-deadline/fixture-deadline.bpmn,
 * beside the fixture app's own model in INBOX_BPMN_DIR: after the hand-over,
 * an event-based gateway waits for the completion or its deadline,
 * `${completionDeadline}`, 14 days by default).
 */
const BPMN_DIR = join(__dirname, '..', 'fixtures', 'bpmn-deadline');
const models = modelsDirWith(join(BPMN_DIR, 'fixture-deadline.bpmn'));
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const fresh = freshFirestores();
const { db, projectId } = fresh.project('cli-timers');
const cli = cliFor(projectId, undefined, { INBOX_BPMN_DIR: models.dir });
afterAll(() => models.remove());
let engine: Engine;

interface TimerRow {
  id: string;
  dueAt: string;
  dueInSeconds: number;
  activityId: string;
  waitingAt: string;
  processInstanceId: string;
  horizon: string;
}
interface TimersPage {
  timers: TimerRow[];
  next: string | null;
}

/** A case handed over at `at`, now waiting at the gateway: its completion deadline timer. */
async function handedOver(
  key: string,
  at: Date,
  deadline?: string,
  on: Firestore = db,
): Promise<{ instanceId: string; timer: TimerState }> {
  const started = await startProcessInstance(on, engine, {
    processKey: 'fixture-deadline',
    businessKey: key,
    variables: { caseId: key, ...(deadline === undefined ? {} : { completionDeadline: deadline }) },
    now: at,
  });
  const done = await completeJobRun(on, engine, started.jobs[0]!, {}, at);
  expect(done.status).toBe('COMPLETED');
  const timer = (await on.collection(COLLECTIONS.timers).where('processInstanceId', '==', started.instance.id).get())
    .docs[0];
  return { instanceId: started.instance.id, timer: { ...(timer?.data() as TimerState), id: timer?.id ?? '' } };
}

const now = Date.now();
const order: Record<string, { instanceId: string; timer: TimerState }> = {};

beforeAll(async () => {
  engine = await loadEngine(BPMN_DIR, {}, new Set(['handOver', 'settle']), inboxBuffer(7 * DAY));
  // Overdue (its task lost): handed over two days ago with one day to complete.
  order.overdue = await handedOver('C-t-overdue', new Date(now - 2 * DAY), 'P1D');
  order.soon = await handedOver('C-t-soon', new Date(now), 'PT1H');
  order.days = await handedOver('C-t-days', new Date(now), 'P3D');
  order.standard = await handedOver('C-t-standard', new Date(now));
  // Beyond the Cloud Tasks horizon: no task yet, the sweep creates it.
  order.far = await handedOver('C-t-far', new Date(now), 'P40D');
});

const KEYS_SOONEST_FIRST = ['overdue', 'soon', 'days', 'standard', 'far'];

describe('inbox timers', () => {
  test('PENDING timers soonest due first, the overdue one on top, with due time, activity, instance and horizon', async () => {
    const r = await cli('--json', 'timers');
    expect(r.code).toBe(0);
    const { timers, next } = r.json() as TimersPage;
    expect(timers.map((t) => t.id)).toEqual(KEYS_SOONEST_FIRST.map((k) => order[k]?.timer.id));
    expect(next).toBeNull();
    expect(timers[0]).toMatchObject({
      activityId: 'overdue',
      waitingAt: 'completedOrOverdue',
      processInstanceId: order.overdue?.instanceId,
      horizon: 'NEAR',
    });
    expect(timers[0]?.dueInSeconds).toBeLessThan(-DAY / 1000 + 120);
    expect(timers.map((t) => t.horizon)).toEqual(['NEAR', 'NEAR', 'NEAR', 'NEAR', 'FAR']);
    expect(Date.parse(timers[3]?.dueAt ?? '')).toBe(now + 14 * DAY);

    const table = await cli('timers');
    expect(table.out).toMatch(
      new RegExp(
        `${order.overdue?.timer.id}.*overdue 1 d.*overdue.*completedOrOverdue.*${order.overdue?.instanceId}.*NEAR`,
      ),
    );
    expect(table.out).toMatch(/in 3 d|in 2 d 23 h/);
  });

  test('--instance: that instance only, on one page; --limit, the older name of --page-size, still pages', async () => {
    const one = (await cli('--json', 'timers', '--instance', order.days?.instanceId ?? '')).json() as TimersPage;
    expect(one).toEqual({ timers: [expect.objectContaining({ id: order.days?.timer.id })], next: null });
    const two = (await cli('--json', 'timers', '--limit', '2')).json() as TimersPage;
    expect(two.timers.map((t) => t.id)).toEqual([order.overdue?.timer.id, order.soon?.timer.id]);
    const rest = (await cli('--json', 'timers', '--limit', '2', '--after', two.next ?? '')).json() as TimersPage;
    expect(rest.timers.map((t) => t.id)).toEqual([order.days?.timer.id, order.standard?.timer.id]);
  });

  test('the gateway waits with a message branch too: `inbox waiting` lists it with its gateway', async () => {
    const waiting = (await cli('--json', 'waiting')).json() as {
      waitingPoints: Array<{ businessKey: string; gatewayId: string | null; activityId: string }>;
    };
    expect(waiting.waitingPoints[0]).toMatchObject({
      businessKey: 'C-t-overdue',
      activityId: 'waitForCompletion',
      gatewayId: 'completedOrOverdue',
    });
  });
});

describe('inbox timers, a page at a time', () => {
  const pages = fresh.project('cli-timers-pages');
  const pagesCli = cliFor(pages.projectId, undefined, { INBOX_BPMN_DIR: models.dir });
  /** Every timer of the project, soonest due first, the id breaking ties: what the pages must show, in this order. */
  let expected: string[] = [];

  beforeAll(async () => {
    // Three due times shared by 4, 4 and 1 timers: pages of 3 end inside the first run and inside the second.
    const made: Array<{ id: string; due: number }> = [];
    for (const [group, count] of [
      [0, 4],
      [1, 4],
      [2, 1],
    ] as const) {
      for (let i = 0; i < count; i++) {
        const { timer } = await handedOver(`C-p-${group}-${i}`, new Date(now + group * HOUR), 'P2D', pages.db);
        made.push({ id: timer.id, due: now + group * HOUR + 2 * DAY });
      }
    }
    expected = made.sort((a, b) => a.due - b.due || (a.id < b.id ? -1 : 1)).map((t) => t.id);
  });

  test('--page-size 3 walks 3 pages over several shards with equal due times at the boundaries: every timer once, in order', async () => {
    const stored = await pages.db.collection(COLLECTIONS.timers).get();
    expect(new Set(stored.docs.map((d) => (d.get('dueAt') as Timestamp).toMillis())).size).toBe(3);
    expect(new Set(stored.docs.map((d) => d.get('shard') as number)).size).toBeGreaterThan(1);
    const seen: string[][] = [];
    let after: string | null = null;
    for (let n = 0; n < 5; n++) {
      const r = await pagesCli('--json', 'timers', '--page-size', '3', ...(after === null ? [] : ['--after', after]));
      expect(r.code).toBe(0);
      const page = r.json() as TimersPage;
      seen.push(page.timers.map((t) => t.id));
      after = page.next;
      if (after === null) break;
    }
    expect(seen).toEqual([expected.slice(0, 3), expected.slice(3, 6), expected.slice(6, 9)]);
  });

  test('for people: each page but the last prints the --after of the next', async () => {
    const first = await pagesCli('timers', '--page-size', '4');
    const more = /^more: add --after ([A-Za-z0-9_-]+)$/m.exec(first.out);
    expect(more).not.toBeNull();
    expect(first.out).toContain(expected[3]);
    expect(first.out).not.toContain(expected[4]);
    const second = await pagesCli('timers', '--page-size', '5', '--after', more?.[1] ?? '');
    expect(expected.slice(4).every((id) => second.out.includes(id))).toBe(true);
    expect(second.out).not.toContain(expected[3]);
    expect(second.out).not.toContain('more:');
  });

  test.each([
    [
      ['timers', '--after', 'not-a-cursor'],
      '--after: expected the cursor a previous page printed (a page of `inbox timers`), got "not-a-cursor"',
    ],
    [['timers', '--page-size', '0'], '--page-size: expected a whole number from 1 to 1000'],
    [['timers', '--limit', 'many'], '--limit: expected a whole number from 1 to 1000'],
    [['timers', '--limit', '2', '--page-size', '2'], '--limit is the older name of --page-size: give one of them'],
    [
      ['timers', '--instance', 'i', '--after', 'x'],
      "--instance lists all of one instance's PENDING timers on one page: leave out --after",
    ],
    [
      ['timers', '--instance', 'i', '--page-size', '2'],
      "--instance lists all of one instance's PENDING timers on one page: leave out --page-size",
    ],
  ])('%j: a usage error (exit 2) naming the flag', async (args, message) => {
    const r = await pagesCli(...args);
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
    expect(r.out).toBe('');
  });

  test('a cursor of `inbox waiting` is refused: its position is in another list', async () => {
    const waitingCursor = ((await pagesCli('--json', 'waiting', '--page-size', '1')).json() as { next: string | null })
      .next;
    expect(waitingCursor).not.toBeNull();
    const r = await pagesCli('timers', '--after', waitingCursor ?? '');
    expect(r.code).toBe(2);
    expect(r.err).toContain('--after: expected the cursor a previous page printed (a page of `inbox timers`)');
  });
});

describe('inbox repair fire-timer', () => {
  test('--dry-run shows the timer and its token and changes nothing', async () => {
    const id = order.overdue?.timer.id ?? '';
    const r = await cli('repair', 'fire-timer', id, '--dry-run');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`${id}.*overdue 1 d.*overdue.*completedOrOverdue`));
    expect((await refs.timer(db, id).get()).get('status')).toBe('PENDING');
  });

  test('fires a due timer whose task was lost: the token takes the overdue path; a second run is refused', async () => {
    const { instanceId, timer } = order.overdue ?? { instanceId: '', timer: { id: '' } };
    const r = await cli('--json', 'repair', 'fire-timer', timer.id.toUpperCase());
    expect(r.code).toBe(0);
    expect(r.json()).toMatchObject({
      fired: timer.id,
      status: 'FIRED',
      alreadyApplied: false,
      jobs: [],
      timers: [],
      dispatched: 0,
    });
    expect((await refs.timer(db, timer.id).get()).get('status')).toBe('FIRED');
    expect((await refs.instance(db, instanceId).get()).get('status')).toBe('COMPLETED');
    // The message branch of the gateway went with it: nobody waits for this case's completion any more.
    const waiting = (await cli('--json', 'waiting')).json() as { waitingPoints: Array<{ instanceId: string }> };
    expect(waiting.waitingPoints.map((p) => p.instanceId)).not.toContain(instanceId);
    expect(((await cli('--json', 'timers')).json() as { timers: TimerRow[] }).timers.map((t) => t.id)).not.toContain(
      timer.id,
    );

    const again = await cli('repair', 'fire-timer', timer.id);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(
      new RegExp(`^inbox: timer ${timer.id} is FIRED \\(at .*\\): only a PENDING timer can be fired$`),
    );
  });

  test('a timer not due yet is refused: its task fires it; nothing changes', async () => {
    const id = order.days?.timer.id ?? '';
    for (const args of [[], ['--dry-run']]) {
      const r = await cli('repair', 'fire-timer', id, ...args);
      expect(r.code).toBe(1);
      expect(r.err).toContain(`timer ${id} is not due until`);
      expect(r.err).toContain('its Cloud Task fires it then');
    }
    expect((await refs.timer(db, id).get()).get('status')).toBe('PENDING');
    expect((await refs.instance(db, order.days?.instanceId ?? '').get()).get('status')).toBe('RUNNING');
  });

  test('a stale timer (its token no longer lists it: edited by hand) is refused and deleted, nothing moves', async () => {
    const { instanceId, timer } = await handedOver('C-t-stale', new Date(now - 20 * DAY));
    await refs.instance(db, timer.processInstanceId).update({ [`tokens.${timer.executionId}.timerIds`]: [] });
    const dry = await cli('repair', 'fire-timer', timer.id, '--dry-run');
    expect(dry.code).toBe(1);
    expect(dry.err).toContain(
      `timer ${timer.id} is stale: its token ${timer.executionId} is WAITING_EVENT at completedOrOverdue and no longer waits with it`,
    );
    const r = await cli('repair', 'fire-timer', timer.id);
    expect(r.code).toBe(1);
    expect(r.err).toContain('the timer is deleted, nothing moved');
    expect((await refs.timer(db, timer.id).get()).exists).toBe(false);
    expect((await refs.instance(db, instanceId).get()).get('status')).toBe('RUNNING');
  });

  test.each([
    [['repair', 'fire-timer', 'f'.repeat(40)], 1, `no timer ${'f'.repeat(40)}`],
    [['repair', 'fire-timer', 'not-a-timer'], 2, 'TIMER_ID: expected a timer id, 40 hex digits'],
  ])('%j: exit %d', async (args, code, message) => {
    const r = await cli(...args);
    expect(r.code).toBe(code);
    expect(r.err).toContain(message);
  });
});
