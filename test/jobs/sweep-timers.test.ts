import type { Firestore } from '@google-cloud/firestore';
import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import request from 'supertest';
import type { Engine } from '../../functions/src/engine/engine';
import type { TimerState } from '../../functions/src/engine/state';
import { refs, shardOf } from '../../functions/src/engine/store/collections';
import { STORED } from '../../functions/src/engine/store/converters';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { TIMER_HORIZON_MS } from '../../functions/src/engine/store/timers';
import { createSweepJobsHandler } from '../../functions/src/jobs/sweep-jobs';
import { sweepTimers, type TimerSweepOptions } from '../../functions/src/jobs/sweep-timers';
import { createLogger } from '../../functions/src/log';
import type { EnqueueOptions, JobQueue } from '../../functions/src/tasks/job-queue';
import { deadlineEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';

/**
 * The timer sweep on the Firestore emulator: FAR timers get their task once
 * due within the horizon, PENDING timers overdue by the grace are fired
 * inline (a lost task), bounded per shard; and sweepJobs runs it beside the
 * job sweep. With Cloud Tasks: test/e2e/timers.test.ts.
 */
const dbs = freshFirestores();
const DAY = 24 * 3_600_000;
const GRACE = 60_000;
let engine: Engine;

beforeAll(async () => {
  engine = await deadlineEngine();
});

function recording(
  fail: (id: string) => Promise<void> = async () => undefined,
): JobQueue & { readonly calls: Array<{ id: string; options: EnqueueOptions | undefined }> } {
  const calls: Array<{ id: string; options: EnqueueOptions | undefined }> = [];
  return {
    calls,
    enqueue: async (id, options) => {
      calls.push({ id, options });
      await fail(id);
      return 'CREATED';
    },
  };
}

interface Run {
  readonly db: Firestore;
  readonly jobs: ReturnType<typeof recording>;
  readonly timers: ReturnType<typeof recording>;
  readonly logs: Array<Record<string, unknown>>;
  sweep(now: Date, options?: TimerSweepOptions): ReturnType<typeof sweepTimers>;
}

function run(label: string, timers = recording()): Run {
  const db = dbs(label);
  const jobs = recording();
  const logs: Array<Record<string, unknown>> = [];
  const log = createLogger((l) => logs.push(JSON.parse(l) as Record<string, unknown>));
  return {
    db,
    jobs,
    timers,
    logs,
    sweep: (now, options = {}) =>
      sweepTimers(
        { db, engine: async () => engine, queues: { jobs, timers }, log, now },
        { graceMs: GRACE, ...options },
      ),
  };
}

async function deadline(
  db: Firestore,
  key: string,
  duration: string,
  at: Date,
  processKey = 'deadline-boundary',
): Promise<{ instanceId: string; timer: TimerState }> {
  const s = await startProcessInstance(db, engine, {
    processKey,
    businessKey: key,
    variables: { caseId: key, deadline: duration },
    now: at,
  });
  return { instanceId: s.instance.id, timer: s.timers[0] ?? (await onlyTimerOf(db, s.instance.id)) };
}
/** A FAR timer is not in Settled.timers (no task after the commit): read it back. */
async function onlyTimerOf(db: Firestore, instanceId: string): Promise<TimerState> {
  const snap = await db.collection('timers').withConverter(STORED).where('processInstanceId', '==', instanceId).get();
  expect(snap.size).toBe(1);
  return snap.docs[0]?.data() as unknown as TimerState;
}
const timerDoc = async (db: Firestore, id: string): Promise<Record<string, unknown> | undefined> =>
  (await refs.timer(db, id).get()).data();
const instanceStatus = async (db: Firestore, id: string): Promise<unknown> =>
  (await refs.instance(db, id).get()).get('status');

describe('FAR timers', () => {
  test('one set 40 days ahead gets no task; once due within the horizon the sweep creates it at its due time and marks it NEAR', async () => {
    const r = run('sweep-far');
    const now = new Date();
    // Set 20 days ago with 40 days to go: FAR then, due in 20 days now.
    const { timer } = await deadline(r.db, 'C-far', 'P40D', new Date(now.getTime() - 20 * DAY));
    const { timer: later } = await deadline(r.db, 'C-far-later', 'P40D', now);
    expect(await timerDoc(r.db, timer.id)).toMatchObject({ status: 'PENDING', horizon: 'FAR' });
    expect(await timerDoc(r.db, later.id)).toMatchObject({ horizon: 'FAR' });

    const summary = await r.sweep(now);
    expect(summary).toEqual({
      broughtNear: 1,
      fired: 0,
      settledMeanwhile: 0,
      failures: 0,
      startedBySchedule: 0,
      queryReads: 32,
    });
    expect(r.timers.calls).toEqual([{ id: timer.id, options: { scheduleTime: timer.dueAt } }]);
    expect(await timerDoc(r.db, timer.id)).toMatchObject({ status: 'PENDING', horizon: 'NEAR' });
    // Still beyond the horizon: left for a later sweep.
    expect(await timerDoc(r.db, later.id)).toMatchObject({ horizon: 'FAR' });
    expect(r.logs).toEqual([expect.objectContaining({ severity: 'INFO', message: 'timer sweep', broughtNear: 1 })]);

    // A NEAR timer is the task's: the next sweep leaves it alone.
    expect(await r.sweep(now)).toEqual({
      broughtNear: 0,
      fired: 0,
      settledMeanwhile: 0,
      failures: 0,
      startedBySchedule: 0,
      queryReads: 32,
    });
    expect(r.timers.calls).toHaveLength(1);
    // The horizon moves with the clock: 11 days on, the later one is within 29 days too.
    expect((await r.sweep(new Date(now.getTime() + 11 * DAY))).broughtNear).toBe(1);
    expect(r.timers.calls.map((c) => c.id)).toEqual([timer.id, later.id]);
    expect(later.dueAt.getTime() - (now.getTime() + 11 * DAY)).toBeLessThanOrEqual(TIMER_HORIZON_MS);
  });

  test('a failed CreateTask leaves the timer FAR for the next sweep; a timer cancelled meanwhile stays deleted', async () => {
    const failing = new Set<string>();
    let cancelling: Firestore | null = null;
    const r = run(
      'sweep-far-fail',
      recording(async (id) => {
        if (failing.has(id)) throw Object.assign(new Error('Cloud Tasks unavailable'), { code: 14 });
        // The token leaves between the sweep's query and its update (the timer is deleted, its task already created).
        if (cancelling !== null) await refs.timer(cancelling, id).delete();
      }),
    );
    const now = new Date();
    const { timer } = await deadline(r.db, 'C-far-fail', 'P40D', new Date(now.getTime() - 20 * DAY));
    failing.add(timer.id);
    expect(await r.sweep(now)).toMatchObject({ broughtNear: 0, failures: 1 });
    expect(await timerDoc(r.db, timer.id)).toMatchObject({ horizon: 'FAR' });
    expect(r.logs).toContainEqual(
      expect.objectContaining({ severity: 'WARNING', timerId: timer.id, error: 'Cloud Tasks unavailable' }),
    );

    failing.clear();
    cancelling = r.db;
    expect(await r.sweep(now)).toMatchObject({ broughtNear: 0, failures: 0 });
    // The update did not bring it back: its task finds nothing and ends.
    expect(await timerDoc(r.db, timer.id)).toBeUndefined();
  });
});

describe('overdue PENDING timers (a lost task)', () => {
  test('fired inline once overdue by more than the grace, with a WARNING; one overdue by less is left to its task', async () => {
    const r = run('sweep-overdue');
    const t0 = new Date(Date.now() - 10 * 60_000);
    const lost = await deadline(r.db, 'C-lost', 'PT1S', t0);
    const late = await deadline(r.db, 'C-late', 'PT8M31S', t0, 'deadline-gateway');
    const now = new Date(lost.timer.dueAt.getTime() + 9 * 60_000);
    // lost: 9 min overdue; late: 30 s overdue, within the grace.
    const summary = await r.sweep(now);
    expect(summary).toEqual({
      broughtNear: 0,
      fired: 1,
      settledMeanwhile: 0,
      failures: 0,
      startedBySchedule: 0,
      queryReads: 32,
    });
    expect(await instanceStatus(r.db, lost.instanceId)).toBe('COMPLETED');
    expect(await timerDoc(r.db, lost.timer.id)).toMatchObject({ status: 'FIRED' });
    expect(await timerDoc(r.db, late.timer.id)).toMatchObject({ status: 'PENDING' });
    expect(r.logs).toContainEqual(
      expect.objectContaining({
        severity: 'WARNING',
        message: 'timer fired by the sweep: its task was lost or late',
        timerId: lost.timer.id,
        processInstanceId: lost.instanceId,
        activityId: 'deadlinePassed',
        lateMs: 9 * 60_000,
      }),
    );
    // Its task, if it comes after all, finds it fired; the next sweep does not fire it again.
    expect(await r.sweep(now)).toEqual({
      broughtNear: 0,
      fired: 0,
      settledMeanwhile: 0,
      failures: 0,
      startedBySchedule: 0,
      queryReads: 32,
    });
  });

  test('bounded per shard and call: what is left is the next call’s, and every timer fires exactly once', async () => {
    const r = run('sweep-bounded');
    const t0 = new Date(Date.now() - 3_600_000);
    const set = await Promise.all(Array.from({ length: 24 }, (_, i) => deadline(r.db, `C-bounded-${i}`, 'PT1S', t0)));
    const shards = new Set(set.map((s) => shardOf(s.timer.id)));
    const now = new Date();
    const first = await r.sweep(now, { perShard: 1 });
    expect(first.fired).toBe(shards.size);
    let fired = first.fired;
    for (let call = 0; call < 24 && fired < set.length; call++) fired += (await r.sweep(now, { perShard: 1 })).fired;
    expect(fired).toBe(set.length);
    for (const s of set) expect(await instanceStatus(r.db, s.instanceId)).toBe('COMPLETED');
  });
});

test('sweepJobs runs the timer sweep beside the job sweep and answers both', async () => {
  const r = run('sweep-jobs-timers');
  const t0 = new Date(Date.now() - 3_600_000);
  const lost = await deadline(r.db, 'C-sweep-jobs', 'PT1S', t0);
  http(
    'sweepJobsTimers',
    createSweepJobsHandler({
      db: () => r.db,
      engine: async () => engine,
      queue: () => r.jobs,
      timerQueue: () => r.timers,
      log: createLogger(() => undefined),
      now: () => new Date(),
      options: {},
    }),
  );
  const res = await request(getTestServer('sweepJobsTimers')).post('/').send({});
  expect({ status: res.status, body: res.body }).toEqual({
    status: 200,
    body: {
      dispatched: 0,
      timers: { broughtNear: 0, fired: 1, settledMeanwhile: 0, failures: 0, startedBySchedule: 0, queryReads: 32 },
    },
  });
  expect(await instanceStatus(r.db, lost.instanceId)).toBe('COMPLETED');
});
