import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { emulatorClient } from '@inbox/cloud-tasks-emulator';
import request from 'supertest';
import type { TimerState } from '../../functions/src/engine/state';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';
import { STORED } from '../../functions/src/engine/store/converters';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { createSweepJobsHandler } from '../../functions/src/jobs/sweep-jobs';
import { createLogger } from '../../functions/src/log';
import { relayBatch } from '../../functions/src/relay/relay-batch';
import { deadlineEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { completionPayload, storePushed } from '../support/inbox';
import { startProcessStack, type ProcessStack } from '../support/process-stack';
import { waitFor } from '../support/wait';
import { tokensOf } from '../support/process-state';
import { waitingPointsOf } from '../support/waiting';

/**
 * Timers end to end on the emulators: startProcess sets a timer in the
 * transaction that sets its waiting point, its Cloud Task (the Cloud Tasks
 * emulator, through the production adapter) waits for its scheduleTime and
 * POSTs to fireTimer, which moves the token. A boundary timer and an
 * event-based gateway (timer first, message first), then the sweep: a timer
 * set beyond Cloud Tasks' 30 days brought near, and a lost task fired late.
 * Durations come through `${deadline}`, seconds here.
 */
jest.setTimeout(90_000);
const DAY = 24 * 3_600_000;
const firestore = freshFirestores();
const { db, projectId } = firestore.project('timers-e2e');
let stack: ProcessStack;
const sweepLogs: Array<Record<string, unknown>> = [];
/** The sweep's clock: a test moves it past a due time instead of waiting for it. */
let sweepNow: Date = new Date();

beforeAll(async () => {
  stack = await startProcessStack(db, projectId, { engine: await deadlineEngine() });
  http(
    'sweepJobsTimersE2e',
    createSweepJobsHandler({
      db: () => db,
      engine: async () => stack.engine,
      queue: () => stack.queue,
      timerQueue: () => stack.timerQueue,
      log: createLogger((l) => sweepLogs.push(JSON.parse(l) as Record<string, unknown>), { function: 'sweepJobs' }),
      now: () => sweepNow,
      options: {},
    }),
  );
});
firestore.beforeTerminate(async () => {
  await stack.stop();
});

const start = async (processKey: string, key: string, deadline: string): Promise<string> => {
  const res = await request(stack.startServer)
    .post('/')
    .send({ processKey, businessKey: key, variables: { caseId: key, deadline } });
  expect(res.status).toBe(201);
  return res.body.processInstanceId as string;
};
const timersOf = async (instanceId: string): Promise<Array<TimerState & { horizon: string }>> =>
  (
    await db.collection(COLLECTIONS.timers).withConverter(STORED).where('processInstanceId', '==', instanceId).get()
  ).docs.map((d) => d.data() as unknown as TimerState & { horizon: string });
const onlyTimer = async (instanceId: string): Promise<TimerState & { horizon: string }> => {
  const timers = await timersOf(instanceId);
  expect(timers).toHaveLength(1);
  return timers[0] as TimerState & { horizon: string };
};
const ended = (instanceId: string): Promise<string[]> =>
  waitFor(`instance ${instanceId} COMPLETED`, async () => {
    if ((await refs.instance(db, instanceId).get()).get('status') !== 'COMPLETED') return undefined;
    return (await tokensOf(db, instanceId)).map((e) => `${e.activityId} ${e.status}`).sort();
  });
const taskName = (timerId: string): string => `${stack.timersQueueName}/tasks/${timerId}`;
const dispatches = (timerId: string) => stack.tasks.dispatchLog.filter((d) => d.task === taskName(timerId));
const sweep = async (at: Date): Promise<Record<string, unknown>> => {
  sweepNow = at;
  const res = await request(getTestServer('sweepJobsTimersE2e')).post('/').send({});
  expect(res.status).toBe(200);
  return res.body.timers as Record<string, unknown>;
};

test('a boundary timer fires through its Cloud Task at its due time: the token leaves the receive task by the timer path', async () => {
  // Seconds enough that the task exists before it is due on a busy machine (created later, Cloud Tasks runs it at once).
  const instanceId = await start('deadline-boundary', 'C-e2e-boundary', 'PT5S');
  const timer = await onlyTimer(instanceId);
  expect(timer).toMatchObject({
    activityId: 'deadlinePassed',
    waitingAt: 'waitForCompletion',
    status: 'PENDING',
    horizon: 'NEAR',
  });
  // The task is named after the timer and scheduled at its due time.
  const task = stack.tasks.tasks(stack.timersQueueName).find((t) => t.name === taskName(timer.id));
  expect(task?.scheduleTime.getTime()).toBe(timer.dueAt.getTime());
  expect(JSON.parse(task?.body?.toString('utf8') ?? '{}')).toEqual({ timerId: timer.id });

  expect(await ended(instanceId)).toEqual(['timedOut ENDED']);
  const [attempt] = dispatches(timer.id);
  expect(attempt).toMatchObject({ status: 200, attempt: 1, url: stack.fireTimerUrl });
  expect(attempt?.time.getTime()).toBeGreaterThanOrEqual(timer.dueAt.getTime());
  expect(await onlyTimer(instanceId)).toMatchObject({ status: 'FIRED' });
  // The waiting point went with the token: a late completion finds nobody waiting.
  expect((await refs.correlationKey(db, 'C-e2e-boundary').get()).exists).toBe(false);
});

test('an event-based gateway: the timer wins when no message comes; a message that comes first wins, and the timer task then finds nothing', async () => {
  const overdue = await start('deadline-gateway', 'C-e2e-gw-timer', 'PT2S');
  const won = await start('deadline-gateway', 'C-e2e-gw-message', 'PT6S');
  const wonTimer = await onlyTimer(won);

  // The completion for the second arrives through the inbox and the relay before its deadline.
  await storePushed(db, { name: 'TaskCompleted', payload: completionPayload('C-e2e-gw-message') });
  const summary = await relayBatch(
    {
      db,
      engine: stack.engine,
      policy: { backoffBaseMs: 1_000, backoffCapMs: 10_000, bufferWindowMs: DAY, errorAfterAttempts: 5 },
      retentionMs: DAY,
      transactionTimeoutMs: 20_000,
      now: () => new Date(),
      random: () => 0.5,
    },
    stack.queues,
    createLogger(() => undefined),
    { budgetMs: 20_000, parallelism: 2, batchSize: 16, shards: 16 },
  );
  expect(summary.correlated).toBe(1);
  expect(await ended(won)).toEqual(['completed ENDED']);
  // The losing timer was deleted in the same transaction.
  expect(await timersOf(won)).toEqual([]);

  expect(await ended(overdue)).toEqual(['escalated ENDED']);
  expect(await waitingPointsOf(db, overdue, 'C-e2e-gw-timer')).toEqual([]);

  // The deleted timer's task still came at its time: answered 200 (not found), so Cloud Tasks ended it; the instance did not move.
  await waitFor('the cancelled timer task', async () => (dispatches(wonTimer.id).length > 0 ? true : undefined));
  expect(dispatches(wonTimer.id)).toEqual([expect.objectContaining({ status: 200, attempt: 1 })]);
  expect(dispatches(wonTimer.id)[0]?.time.getTime()).toBeGreaterThanOrEqual(wonTimer.dueAt.getTime());
  expect(stack.logs).toContainEqual(
    expect.objectContaining({ timerId: wonTimer.id, message: expect.stringContaining('not found') }),
  );
  expect(await ended(won)).toEqual(['completed ENDED']);
});

test('the sweep brings a timer set beyond 30 days near: its task is created at its due time; a task early by the clock of fireTimer is answered 503', async () => {
  const now = new Date();
  // Set 20 days ago with 40 days to go: FAR then (no task: Cloud Tasks refuses more than 720 h ahead), due in 20 days now.
  const started = await startProcessInstance(db, stack.engine, {
    processKey: 'deadline-boundary',
    businessKey: 'C-e2e-far',
    variables: { caseId: 'C-e2e-far', deadline: 'P40D' },
    now: new Date(now.getTime() - 20 * DAY),
  });
  expect(started.timers).toEqual([]);
  const timer = await onlyTimer(started.instance.id);
  expect(timer.horizon).toBe('FAR');
  expect(stack.tasks.tasks(stack.timersQueueName).some((t) => t.name === taskName(timer.id))).toBe(false);

  expect(await sweep(now)).toMatchObject({ broughtNear: 1, fired: 0 });
  expect((await onlyTimer(started.instance.id)).horizon).toBe('NEAR');
  const task = stack.tasks.tasks(stack.timersQueueName).find((t) => t.name === taskName(timer.id));
  expect(task?.scheduleTime.getTime()).toBe(timer.dueAt.getTime());

  // Run the task now, 20 days early (a clock far off): fireTimer refuses to fire it and asks Cloud Tasks to come back.
  const admin = emulatorClient(stack.tasks.host);
  try {
    await admin.runTask({ name: taskName(timer.id) });
    await waitFor('the early attempt', async () => (dispatches(timer.id).length > 0 ? true : undefined));
    await admin.deleteTask({ name: taskName(timer.id) });
  } finally {
    await admin.close();
  }
  expect(dispatches(timer.id)[0]).toMatchObject({ status: 503 });
  expect(await onlyTimer(started.instance.id)).toMatchObject({ status: 'PENDING' });
  expect(stack.logs).toContainEqual(
    expect.objectContaining({
      severity: 'WARNING',
      timerId: timer.id,
      message: expect.stringContaining('before the due time'),
    }),
  );

  // Its task is gone now (deleted above: a task that gave up): the sweep fires it once it is overdue.
  expect(await sweep(new Date(timer.dueAt.getTime() + 61_000))).toMatchObject({ fired: 1 });
  expect(await ended(started.instance.id)).toEqual(['timedOut ENDED']);
});

test('a lost task: CreateTask fails after the commit, nothing is lost, and the sweep fires the timer late', async () => {
  stack.tasks.failNextCreateTask(1);
  const instanceId = await start('deadline-boundary', 'C-e2e-lost', 'PT1S');
  const timer = await onlyTimer(instanceId);
  expect(stack.logs).toContainEqual(
    expect.objectContaining({
      severity: 'WARNING',
      timerId: timer.id,
      message: expect.stringContaining('could not create the timer task'),
    }),
  );
  expect(stack.tasks.tasks(stack.timersQueueName).some((t) => t.name === taskName(timer.id))).toBe(false);

  // Within the grace the sweep leaves it to its task; past it, the sweep fires it.
  expect(await sweep(new Date(timer.dueAt.getTime() + 30_000))).toMatchObject({ fired: 0 });
  expect(await sweep(new Date(timer.dueAt.getTime() + 61_000))).toMatchObject({ fired: 1 });
  expect(await ended(instanceId)).toEqual(['timedOut ENDED']);
  expect(sweepLogs).toContainEqual(
    expect.objectContaining({
      severity: 'WARNING',
      function: 'sweepJobs',
      timerId: timer.id,
      processInstanceId: instanceId,
      message: 'timer fired by the sweep: its task was lost or late',
      lateMs: 61_000,
    }),
  );
});
