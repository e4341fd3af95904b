import { OAuth2Client } from 'google-auth-library';
import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { join } from 'node:path';
import request from 'supertest';
import { createPushTokenVerifier } from '../../functions/src/auth/push-token';
import { loadProcessModel } from '../../functions/src/engine/deployed';
import { Engine } from '../../functions/src/engine/engine';
import type { TimerState } from '../../functions/src/engine/state';
import { refs } from '../../functions/src/engine/store/collections';
import { correlate } from '../../functions/src/engine/store/correlate';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { runUnitOfWork } from '../../functions/src/engine/store/unit-of-work';
import { createFireTimerHandler, retryAfterSeconds } from '../../functions/src/jobs/fire-timer';
import { createLogger } from '../../functions/src/log';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import type { EnqueueOptions, JobQueue } from '../../functions/src/tasks/job-queue';
import { deadlineEngine, REPO_ROOT } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { createSigner } from '../support/tokens';
import { jobOf } from '../support/process-state';
import { commitFaults, writes } from '../support/commit-faults';

/**
 * fireTimer served in process on the Firestore emulator: each outcome of
 * the firing transaction (engine/store/fire-timer.ts) and the answer that
 * steers Cloud Tasks; what a firing creates goes to the queues after the
 * commit. Cloud Tasks itself: test/e2e/timers.test.ts.
 */
const db = freshFirestores()('fire-timer');
let engine: Engine;
const logs: Array<Record<string, unknown>> = [];
const log = createLogger((l) => logs.push(JSON.parse(l) as Record<string, unknown>), { function: 'fireTimer' });

interface Recorded {
  readonly id: string;
  readonly options: EnqueueOptions | undefined;
}
function recording(): JobQueue & { readonly calls: Recorded[] } {
  const calls: Recorded[] = [];
  return { calls, enqueue: async (id, options) => (calls.push({ id, options }), 'CREATED') };
}
const jobs = recording();
const timers = recording();

let clock = new Date();
let served = 0;
/** fireTimer with the clock of the test, no token check unless a verifier is given. */
function server(
  verifier: Parameters<typeof createFireTimerHandler>[0]['verifier'] = null,
): ReturnType<typeof getTestServer> {
  const name = `fireTimerTest${++served}`;
  http(
    name,
    createFireTimerHandler({
      db: () => db,
      engine: async () => engine,
      queue: () => jobs,
      timerQueue: () => timers,
      verifier,
      log,
      now: () => clock,
    }),
  );
  return getTestServer(name);
}
let fire: ReturnType<typeof getTestServer>;

beforeAll(async () => {
  const deadlines = await deadlineEngine();
  const kinds = await loadProcessModel(join(REPO_ROOT, 'test', 'fixtures', 'bpmn', 'timer-kinds.bpmn'));
  engine = new Engine(
    [...deadlines.processKeys.map((k) => deadlines.model(k)), kinds],
    {},
    new Set(['work', 'sendReminder']),
    inboxBuffer(7 * 24 * 3_600_000),
  );
  fire = server();
});
beforeEach(() => {
  logs.length = 0;
  jobs.calls.length = 0;
  timers.calls.length = 0;
});

async function started(
  processKey: string,
  key: string,
  variables: Record<string, unknown>,
  at: Date,
): Promise<{ instanceId: string; timer: TimerState }> {
  const s = await startProcessInstance(db, engine, {
    processKey,
    businessKey: key,
    variables: { caseId: key, ...variables },
    now: at,
  });
  expect(s.timers).toHaveLength(1);
  return { instanceId: s.instance.id, timer: s.timers[0] as TimerState };
}
const timerDoc = async (id: string): Promise<Record<string, unknown> | undefined> =>
  (await refs.timer(db, id).get()).data();
const instanceStatus = async (id: string): Promise<unknown> => (await refs.instance(db, id).get()).get('status');

describe('fireTimer', () => {
  test('a due timer fires once: the token takes the timer path, the timer is FIRED, one INFO line; a second delivery is "already fired"', async () => {
    const t0 = new Date();
    const { instanceId, timer } = await started('deadline-boundary', 'C-fire-1', { deadline: 'PT2S' }, t0);
    clock = new Date(t0.getTime() + 2_000);
    const res = await request(fire).post('/').send({ timerId: timer.id });
    expect({ status: res.status, body: res.body }).toEqual({
      status: 200,
      body: { outcome: 'fired', timerId: timer.id },
    });
    expect(await instanceStatus(instanceId)).toBe('COMPLETED');
    expect(await timerDoc(timer.id)).toMatchObject({ status: 'FIRED', expireAt: expect.anything() });
    expect(logs).toEqual([
      expect.objectContaining({
        severity: 'INFO',
        message: 'timer fired',
        function: 'fireTimer',
        timerId: timer.id,
        processInstanceId: instanceId,
        activityId: 'deadlinePassed',
        lateMs: 0,
        nextJobs: 0,
        nextTimers: 0,
      }),
    ]);

    const again = await request(fire).post('/').send({ timerId: timer.id });
    expect({ status: again.status, body: again.body }).toEqual({
      status: 200,
      body: { outcome: 'already fired', timerId: timer.id },
    });
  });

  test('what a firing creates is dispatched after the commit: the next job, and the task of the next timer at its due time', async () => {
    const t0 = new Date();
    const { timer } = await started('timer-kinds', 'C-fire-kinds', { orderId: 'O-1' }, t0);
    clock = new Date(timer.dueAt.getTime());
    const res = await request(fire).post('/').send({ timerId: timer.id });
    expect(res.body.outcome).toBe('fired');
    // The delay fired: the token entered the async task "work" (a job) with its reminder cycle (a timer due in an hour).
    expect(jobs.calls).toHaveLength(1);
    expect((await jobOf(db, timer.processInstanceId, jobs.calls[0]?.id ?? ''))?.activityId).toBe('work');
    expect(timers.calls).toHaveLength(1);
    const reminder = await timerDoc(timers.calls[0]?.id ?? '');
    expect(reminder).toMatchObject({ activityId: 'remind', status: 'PENDING', horizon: 'NEAR' });
    expect(timers.calls[0]?.options).toEqual({ scheduleTime: new Date(clock.getTime() + 3_600_000) });
    expect(logs.find((l) => l.message === 'timer fired')).toMatchObject({ nextJobs: 1, nextTimers: 1 });
  });

  test('a firing whose commit landed but whose answer was lost: the re-run reports it fired and dispatches what it created; another delivery is "already fired"', async () => {
    const t0 = new Date();
    const { timer } = await started('timer-kinds', 'C-fire-landed', { orderId: 'O-landed' }, t0);
    clock = new Date(timer.dueAt.getTime());
    const faults = commitFaults(db);
    let res: request.Response;
    try {
      faults.afterLanding((r) => writes(r, `timers/${timer.id}`), { kind: 'UNAVAILABLE' });
      res = await request(fire).post('/').send({ timerId: timer.id });
      expect(faults.fired()).toBe(1);
    } finally {
      faults.restore();
    }
    expect({ status: res.status, outcome: res.body.outcome }).toEqual({ status: 200, outcome: 'fired' });
    // What the landed firing created is dispatched now, not when the sweep finds it a minute or more later.
    expect(jobs.calls).toHaveLength(1);
    expect(await jobOf(db, timer.processInstanceId, jobs.calls[0]?.id ?? '')).toMatchObject({
      activityId: 'work',
      status: 'PENDING',
    });
    expect(timers.calls).toHaveLength(1);
    expect(await timerDoc(timers.calls[0]?.id ?? '')).toMatchObject({ activityId: 'remind', status: 'PENDING' });
    expect(await timerDoc(timer.id)).toMatchObject({
      status: 'FIRED',
      firing: { jobIds: [jobs.calls[0]?.id], timerIds: [timers.calls[0]?.id] },
    });
    jobs.calls.length = 0;
    const again = await request(fire).post('/').send({ timerId: timer.id });
    expect(again.body.outcome).toBe('already fired');
    expect(jobs.calls).toEqual([]);
  });

  test('a task that comes early (clock skew beyond 1 s): 503 with Retry-After until the due time, nothing written; at the due time it fires', async () => {
    const t0 = new Date();
    const { instanceId, timer } = await started('deadline-boundary', 'C-fire-early', { deadline: 'PT30S' }, t0);
    clock = new Date(timer.dueAt.getTime() - 4_500);
    const res = await request(fire).post('/').send({ timerId: timer.id });
    expect({ status: res.status, retryAfter: res.headers['retry-after'], body: res.body }).toEqual({
      status: 503,
      retryAfter: '5',
      body: { error: 'the timer is not due yet', code: 'NOT_DUE', retry: true },
    });
    expect(await timerDoc(timer.id)).toMatchObject({ status: 'PENDING' });
    expect(await instanceStatus(instanceId)).toBe('RUNNING');
    expect(logs).toEqual([expect.objectContaining({ severity: 'WARNING', timerId: timer.id, earlyMs: 4_500 })]);
    // Within the tolerance it fires: Cloud Tasks' clock a little ahead of ours does not cost a round trip.
    clock = new Date(timer.dueAt.getTime() - 500);
    expect((await request(fire).post('/').send({ timerId: timer.id })).body.outcome).toBe('fired');
  });

  test('a timer whose token left without it (the message won) is "not found": 200, so the task ends', async () => {
    const t0 = new Date();
    const { instanceId, timer } = await started('deadline-gateway', 'C-fire-won', { deadline: 'PT1M' }, t0);
    const { result } = await runUnitOfWork(db, (uow) =>
      correlate(uow, engine, { messageName: 'TaskCompleted', correlationKey: 'C-fire-won', variables: {}, now: t0 }),
    );
    expect(result.kind).toBe('CORRELATED');
    expect(await timerDoc(timer.id)).toBeUndefined();
    clock = new Date(timer.dueAt.getTime());
    const res = await request(fire).post('/').send({ timerId: timer.id });
    expect({ status: res.status, body: res.body }).toEqual({
      status: 200,
      body: { outcome: 'not found', timerId: timer.id },
    });
    expect(await instanceStatus(instanceId)).toBe('COMPLETED');
    expect(logs).toEqual([
      expect.objectContaining({ severity: 'INFO', timerId: timer.id, message: expect.stringContaining('not found') }),
    ]);
  });

  test('a timer whose token no longer waits with it is STALE: deleted, logged at INFO, 200', async () => {
    const t0 = new Date();
    const { instanceId, timer } = await started('deadline-boundary', 'C-fire-stale', { deadline: 'PT1S' }, t0);
    // The token moved on without deleting the timer (as a token stored before timers existed would have).
    await refs.instance(db, timer.processInstanceId).update({ [`tokens.${timer.executionId}.timerIds`]: [] });
    clock = new Date(timer.dueAt.getTime());
    const res = await request(fire).post('/').send({ timerId: timer.id });
    expect({ status: res.status, body: res.body }).toEqual({
      status: 200,
      body: { outcome: 'stale', timerId: timer.id },
    });
    expect(await timerDoc(timer.id)).toBeUndefined();
    expect(await instanceStatus(instanceId)).toBe('RUNNING');
    expect(logs).toEqual([
      expect.objectContaining({
        severity: 'INFO',
        timerId: timer.id,
        processInstanceId: instanceId,
        activityId: 'deadlinePassed',
        message: expect.stringContaining('stale'),
      }),
    ]);
  });

  test.each([
    ['no timerId', {}],
    ['not 40 hex digits', { timerId: '../timers/x' }],
    ['upper-case hex', { timerId: 'A'.repeat(40) }],
  ])('a body with %s: 400 naming the field, never retryable', async (_what, body) => {
    const res = await request(fire).post('/').send(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toContain('timerId');
    expect(res.body.retry).toBeUndefined();
  });

  test('another method: 405 with Allow: POST', async () => {
    const res = await request(fire).get('/');
    expect({ status: res.status, allow: res.headers.allow }).toEqual({ status: 405, allow: 'POST' });
  });
});

test('retryAfterSeconds: the whole seconds until the due time, at least 1', () => {
  const now = new Date('2026-12-01T00:00:00Z');
  expect(retryAfterSeconds(new Date(now.getTime() + 4_001), now)).toBe(5);
  expect(retryAfterSeconds(new Date(now.getTime() + 1_000), now)).toBe(1);
  expect(retryAfterSeconds(new Date(now.getTime() + 10), now)).toBe(1);
  expect(retryAfterSeconds(new Date(now.getTime() - 5_000), now)).toBe(1);
});

describe('fireTimer checks the token of the tasks account, as runJob does', () => {
  const URL = 'https://inbox.example.test/fireTimer';
  const ACCOUNT = 'inbox-tasks@test-project.iam.gserviceaccount.com';
  const signer = createSigner();
  let guarded: ReturnType<typeof getTestServer>;
  beforeAll(() => {
    const verifier = createPushTokenVerifier({
      audience: URL,
      allowedEmails: [ACCOUNT],
      client: new OAuth2Client(),
      certs: async () => signer.certs,
    });
    guarded = server(async () => verifier);
  });
  const body = { timerId: 'b'.repeat(40) };

  test.each([
    ['no token', undefined, 401],
    ['a token for runJob', `Bearer ${signer.token({ aud: 'https://inbox.example.test/runJob', email: ACCOUNT })}`, 401],
    ['a token of another account', `Bearer ${signer.token({ aud: URL })}`, 403],
  ])('%s: refused', async (_what, authorization, status) => {
    let call = request(guarded).post('/');
    if (authorization !== undefined) call = call.set('authorization', authorization);
    expect((await call.send(body)).status).toBe(status);
  });

  test('the tasks account passes; an unknown timer ends its task with 200', async () => {
    const res = await request(guarded)
      .post('/')
      .set('authorization', `Bearer ${signer.token({ aud: URL, email: ACCOUNT })}`)
      .send(body);
    expect({ status: res.status, body: res.body }).toEqual({
      status: 200,
      body: { outcome: 'not found', timerId: body.timerId },
    });
  });
});
