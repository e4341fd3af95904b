import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import request from 'supertest';
import { modelProblems } from '../../functions/src/apps/check-models';
import type { Engine } from '../../functions/src/engine/engine';
import { loadEngine, loadProcessModel } from '../../functions/src/engine/deployed';
import type { InstanceState, JobState, UserTaskState } from '../../functions/src/engine/state';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';
import { completeUserTaskRun } from '../../functions/src/engine/store/complete-user-task';
import { STORED } from '../../functions/src/engine/store/converters';
import { correlate } from '../../functions/src/engine/store/correlate';
import { fireTimerRun } from '../../functions/src/engine/store/fire-timer';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { runUnitOfWork } from '../../functions/src/engine/store/unit-of-work';
import type { AsyncHandler } from '../../functions/src/jobs/handlers';
import { createRunJobHandler } from '../../functions/src/jobs/run-job';
import { createLogger } from '../../functions/src/log';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import type { JobQueue } from '../../functions/src/tasks/job-queue';
import { freshFirestores } from '../support/firestore';
import { findJob, openUserTaskOf, tokensOf } from '../support/process-state';

/**
 * "Camunda 8 models run unchanged": the five public Zeebe models of
 * test/fixtures/camunda8 (README.md there: where each comes from) load as
 * they are, from that very folder, and run end to end through the store on
 * the emulator. Every job goes through runJob (served in process, its
 * queues recording what it dispatches), with the handlers registered by
 * `zeebe:taskDefinition type` only, never by element id: so the lookup by
 * type is what finds them.
 */
const MODELS = join(__dirname, '..', 'fixtures', 'camunda8');
const DAY = 86_400_000;

/** The git blob ids (prefixes) README.md records for the upstream files: the bytes are the upstream bytes. */
const UPSTREAM_BLOBS: Readonly<Record<string, string>> = {
  'Client-DeployWorkflow.bpmn': 'd16ed3f9',
  'looping-servicetask.bpmn': 'e16ea409',
  'say_hello.bpmn': '5083c3b5',
  'user-task-form.bpmn': '7002efcf',
  'simple_user_task.bpmn': 'c2975f2f',
};
const gitBlobId = (bytes: Buffer): string =>
  createHash('sha1')
    .update(Buffer.concat([Buffer.from(`blob ${bytes.length}\0`), bytes]))
    .digest('hex');

const fresh = freshFirestores();
const { db } = fresh.project('camunda8-models');

/** What each handler saw (its instance's variables, laid over by the inputs), by task type. */
const seen: Array<{
  type: string;
  activityId: string;
  taskType: string | undefined;
  variables: Record<string, unknown>;
}> = [];
/** What a handler returns, by task type (default `{}`). */
const results: Record<string, Record<string, unknown>> = { hello_task: { message: 'Hello World', extra: 1 } };
/** Task types whose handler fails (a technical failure, retried) while listed. */
const failing = new Set<string>();
const handler =
  (type: string): AsyncHandler =>
  async ({ job, instance }) => {
    seen.push({ type, activityId: job.activityId, taskType: job.taskType, variables: { ...instance.variables } });
    if (failing.has(type)) throw new Error(`${type} is down`);
    return results[type] ?? {};
  };
/** Keyed by task type only: none of these is an element id of the models. */
const TYPES = ['demo-service', 'process-message', 'time-out', 'test', 'hello_task'] as const;
const handlers: Record<string, AsyncHandler> = Object.fromEntries(TYPES.map((t) => [t, handler(t)]));

/** What runJob dispatched after its commits: the jobs queue's job ids (their instance beside them) and the timers queue's. */
const enqueuedJobs: Array<{ id: string; processInstanceId: string | undefined }> = [];
const enqueuedTimers: string[] = [];
const jobsQueue: JobQueue = {
  enqueue: async (id, options) => {
    enqueuedJobs.push({ id, processInstanceId: options?.processInstanceId });
    return 'CREATED';
  },
};
const timersQueue: JobQueue = {
  enqueue: async (id) => {
    enqueuedTimers.push(id);
    return 'CREATED';
  },
};

let engine: Engine;
let runJobServer: Server;
let runJobUrl: string;

beforeAll(async () => {
  engine = await loadEngine(MODELS, {}, new Set(TYPES), inboxBuffer(7 * DAY));
  http(
    'runJobCamunda8',
    createRunJobHandler({
      db: () => db,
      engine: async () => engine,
      queue: () => jobsQueue,
      timerQueue: () => timersQueue,
      handlers: () => handlers,
      verifier: null,
      log: createLogger(() => undefined),
      now: () => new Date(),
      maxAttempts: 3,
      queueMaxAttempts: 10,
    }),
  );
  runJobServer = getTestServer('runJobCamunda8');
  await new Promise<void>((resolve) => runJobServer.listen(0, '127.0.0.1', resolve));
  const address = runJobServer.address();
  if (address === null || typeof address === 'string') throw new Error('runJob has no address');
  runJobUrl = `http://127.0.0.1:${address.port}/`;
});
fresh.beforeTerminate(async () => {
  await new Promise((resolve) => runJobServer.close(resolve));
});

const instanceOf = async (id: string): Promise<InstanceState> =>
  (await refs.instance(db, id).withConverter(STORED).get()).data() as unknown as InstanceState;

/**
 * Delivers one job to runJob as Cloud Tasks' first attempt; answers the
 * outcome and the jobs its commit dispatched (what the queue got).
 */
async function runJob(job: Pick<JobState, 'id' | 'processInstanceId'>): Promise<{ outcome: string; next: string[] }> {
  const before = enqueuedJobs.length;
  const res = await request(runJobUrl)
    .post('/')
    .set('X-CloudTasks-TaskRetryCount', '0')
    .send({ jobId: job.id, processInstanceId: job.processInstanceId });
  expect(res.status).toBe(200);
  const next = enqueuedJobs.slice(before);
  for (const n of next) expect(n.processInstanceId).toBe(job.processInstanceId);
  return { outcome: String((res.body as { outcome?: unknown }).outcome), next: next.map((n) => n.id) };
}

/** Runs `first` and every job it leads to, at most `limit`; answers the task types in the order they ran. */
async function runJobs(first: readonly JobState[], limit = 20): Promise<string[]> {
  const queue: Array<Pick<JobState, 'id' | 'processInstanceId'>> = [...first];
  const ran: string[] = [];
  while (queue.length > 0 && ran.length < limit) {
    const job = queue.shift() as Pick<JobState, 'id' | 'processInstanceId'>;
    const stored = await findJob(db, job.id);
    ran.push(String(stored?.taskType));
    const { outcome, next } = await runJob(job);
    expect(outcome).toBe('completed');
    queue.push(...next.map((id) => ({ id, processInstanceId: job.processInstanceId })));
  }
  return ran;
}

const start = (processKey: string, businessKey: string, variables: Record<string, unknown>) =>
  startProcessInstance(db, engine, { processKey, businessKey, variables, now: new Date() });

const openTaskOf = (instanceId: string): Promise<UserTaskState> => openUserTaskOf(db, instanceId);

test('the models loaded are the fixture files, byte for byte the upstream blobs', () => {
  const files = readdirSync(MODELS)
    .filter((f) => f.endsWith('.bpmn'))
    .sort();
  expect(files).toEqual(Object.keys(UPSTREAM_BLOBS).sort());
  for (const f of files) expect(gitBlobId(readFileSync(join(MODELS, f)))).toMatch(new RegExp(`^${UPSTREAM_BLOBS[f]}`));
  expect([...engine.processKeys].sort()).toEqual(
    ['Process_1', 'SimpleUserTask', 'hello_process', 'looping-servicetask', 'test-process'].sort(),
  );
});

describe('Client-DeployWorkflow.bpmn (camunda-8-js-sdk)', () => {
  /** Starts with `uniqueId`, runs the demo-service job; the token then waits at the event-based gateway. */
  async function atGateway(uniqueId: string): Promise<string> {
    const s = await start('test-process', `deploy-${uniqueId}`, { uniqueId });
    expect(s.jobs).toHaveLength(1);
    const job = s.jobs[0] as JobState;
    expect({ activityId: job.activityId, taskType: job.taskType }).toEqual({
      activityId: 'ServiceTask_0xdwuw7',
      taskType: 'demo-service',
    });
    const timersBefore = enqueuedTimers.length;
    expect(await runJob(job)).toEqual({ outcome: 'completed', next: [] });
    expect(seen.at(-1)).toMatchObject({ type: 'demo-service', taskType: 'demo-service' });
    // The PT5S timer of the other branch went to the timers queue.
    expect(enqueuedTimers.length).toBe(timersBefore + 1);
    // The key is `=uniqueId` evaluated: the gateway's message branch waits under it.
    expect((await refs.correlationKey(db, uniqueId).get()).get('waitingFor')).toEqual(['Message_In']);
    return s.instance.id;
  }

  test('Message_In under the uniqueId takes the message branch: process-message runs, the instance completes', async () => {
    const id = await atGateway('u1');
    const correlated = await runUnitOfWork(db, (uow) =>
      correlate(uow, engine, { messageName: 'Message_In', correlationKey: 'u1', variables: {}, now: new Date() }),
    );
    expect(correlated.result).toMatchObject({ kind: 'CORRELATED', processInstanceId: id });
    if (correlated.result.kind !== 'CORRELATED') return;
    expect(correlated.result.jobs.map((j) => [j.activityId, j.taskType])).toEqual([
      ['ServiceTask_1ng04rq', 'process-message'],
    ]);
    expect(await runJobs(correlated.result.jobs)).toEqual(['process-message']);
    expect(await instanceOf(id)).toMatchObject({ status: 'COMPLETED', variables: { uniqueId: 'u1' } });
    // The timer branch went with the gateway: nothing waits under the key any more.
    expect((await refs.correlationKey(db, 'u1').get()).exists).toBe(false);
    expect((await db.collection(COLLECTIONS.timers).where('processInstanceId', '==', id).get()).size).toBe(0);
  });

  test('no message: the PT5S timer fires, time-out runs, the instance completes', async () => {
    const id = await atGateway('u2');
    const timers = await db.collection(COLLECTIONS.timers).where('processInstanceId', '==', id).get();
    expect(timers.size).toBe(1);
    const fired = await fireTimerRun(db, engine, timers.docs[0]?.id as string, new Date(Date.now() + 10_000));
    expect(fired.status).toBe('FIRED');
    expect(fired.jobs.map((j) => [j.activityId, j.taskType])).toEqual([['ServiceTask_1rszkg1', 'time-out']]);
    expect(await runJobs(fired.jobs)).toEqual(['time-out']);
    expect(await instanceOf(id)).toMatchObject({ status: 'COMPLETED' });
    // A late Message_In finds nobody.
    const late = await runUnitOfWork(db, (uow) =>
      correlate(uow, engine, { messageName: 'Message_In', correlationKey: 'u2', variables: {}, now: new Date() }),
    );
    expect(late.result.kind).toBe('NO_WAITING_INSTANCE');
  });
});

describe('looping-servicetask.bpmn (zeebe-process-test)', () => {
  test('totalLoops 3: the start output sets loopAmount 0, each test job adds 1, the FEEL condition loops until 3', async () => {
    const s = await start('looping-servicetask', 'loop-3', { totalLoops: 3 });
    expect(s.jobs.map((j) => [j.activityId, j.taskType])).toEqual([['servicetask', 'test']]);
    expect((await instanceOf(s.instance.id)).variables).toEqual({ totalLoops: 3, loopAmount: 0 });
    const before = seen.length;
    expect(await runJobs(s.jobs)).toEqual(['test', 'test', 'test']);
    // Each run saw the loop count so far.
    expect(seen.slice(before).map((v) => v.variables.loopAmount)).toEqual([0, 1, 2]);
    const done = await instanceOf(s.instance.id);
    expect(done.status).toBe('COMPLETED');
    expect(done.variables).toEqual({ totalLoops: 3, loopAmount: 3 });
  });

  test('without totalLoops the condition cannot be decided: an open EXPRESSION_FAILED incident naming it, no endless loop', async () => {
    const s = await start('looping-servicetask', 'loop-none', {});
    expect(s.jobs).toHaveLength(1);
    // At most a few runs: an engine that loops would run on to the limit.
    const ran = await runJobs(s.jobs, 5);
    expect(ran).toEqual(['test']);
    const stopped = await instanceOf(s.instance.id);
    expect(stopped.status).toBe('INCIDENT');
    const open = stopped.incidents.filter((i) => i.resolvedAt === undefined || i.resolvedAt === null);
    expect(open).toHaveLength(1);
    expect(open[0]).toMatchObject({ reason: 'EXPRESSION_FAILED', activityId: 'Gateway_0fhwf5d' });
    expect(open[0]?.message).toMatch(/loopSequenceFlow/);
    expect(open[0]?.message).toMatch(/totalLoops/);
    expect(stopped.variables).toEqual({ loopAmount: 1 });
  });
});

describe('say_hello.bpmn (quarkus-zeebe)', () => {
  test('the hello_task handler sees name through the input mapping; only message comes back', async () => {
    const s = await start('hello_process', 'hello-1', { name: 'World' });
    expect(s.jobs.map((j) => [j.activityId, j.taskType])).toEqual([['Activity_0apsury', 'hello_task']]);
    expect(await runJobs(s.jobs)).toEqual(['hello_task']);
    expect(seen.at(-1)).toMatchObject({ type: 'hello_task', taskType: 'hello_task', variables: { name: 'World' } });
    const done = await instanceOf(s.instance.id);
    expect(done.status).toBe('COMPLETED');
    expect(done.variables).toEqual({ name: 'World', message: 'Hello World' });
    expect(done.variables).not.toHaveProperty('extra');
  });
});

describe('user tasks', () => {
  async function completeAndEnd(id: string, task: UserTaskState): Promise<void> {
    const done = await completeUserTaskRun(
      db,
      engine,
      { userTaskId: task.id, variables: { inspected: true }, by: 'ana@example.com', requestId: `req-${id}` },
      new Date(),
    );
    expect(done.kind).toBe('COMPLETED');
    expect(await instanceOf(id)).toMatchObject({ status: 'COMPLETED', variables: { inspected: true } });
    expect((await tokensOf(db, id)).filter((t) => t.status !== 'ENDED')).toEqual([]);
  }

  test('user-task-form.bpmn (camunda-modeler): a Camunda user task with its form, OPEN; completing it ends the instance', async () => {
    const s = await start('Process_1', 'form-1', {});
    expect(s.jobs).toEqual([]);
    const task = await openTaskOf(s.instance.id);
    expect(task).toMatchObject({
      activityId: 'UserTask_1',
      name: 'Inspect Invoice',
      assignee: null,
      candidateGroups: [],
      formKey: 'formId:invoice-form',
      status: 'OPEN',
    });
    await completeAndEnd(s.instance.id, task);
  });

  test('simple_user_task.bpmn (quarkus-zeebe): assignee and candidate groups stored as written; completing it ends the instance', async () => {
    const s = await start('SimpleUserTask', 'simple-1', {});
    expect(s.jobs).toEqual([]);
    const task = await openTaskOf(s.instance.id);
    expect(task).toMatchObject({
      activityId: 'user-task-1',
      name: 'user-task-1',
      assignee: 'Assignee',
      candidateGroups: ['Group1', 'Group2'],
      formKey: null,
      status: 'OPEN',
    });
    // The model reads candidateUsers too.
    expect(engine.model('SimpleUserTask').nodes['user-task-1']).toMatchObject({ candidateUsers: ['User1', 'User2'] });
    await completeAndEnd(s.instance.id, task);
  });

  test('simple_user_task.bpmn: the stored task keeps candidateUsers as written', async () => {
    const s = await start('SimpleUserTask', 'simple-users', {});
    expect(await openTaskOf(s.instance.id)).toMatchObject({ candidateUsers: ['User1', 'User2'] });
  });
});

test('an app without the hello_task handler is refused naming the task type', async () => {
  const models = await Promise.all(Object.keys(UPSTREAM_BLOBS).map((f) => loadProcessModel(join(MODELS, f))));
  const problems = modelProblems(models, {
    steps: new Set(TYPES.filter((t) => t !== 'hello_task')),
    syncSteps: new Set(),
    messages: new Set(['Message_In']),
  });
  expect(problems).toEqual([
    'task hello_process/Activity_0apsury has zeebe:taskDefinition type hello_task but steps has no handler hello_task: add one',
  ]);
  expect(
    modelProblems(models, { steps: new Set(TYPES), syncSteps: new Set(), messages: new Set(['Message_In']) }),
  ).toEqual([]);
});

describe('zeebe:taskDefinition retries bound the job, not the system default', () => {
  /** One delivery of a job as Cloud Tasks' first attempt: the status and the body. */
  const deliver = async (job: JobState): Promise<{ status: number; body: Record<string, unknown> }> => {
    const res = await request(runJobUrl)
      .post('/')
      .set('X-CloudTasks-TaskRetryCount', '0')
      .send({ jobId: job.id, processInstanceId: job.processInstanceId });
    return { status: res.status, body: res.body as Record<string, unknown> };
  };

  test('retries="1" (looping-servicetask): the first failure fails the job, where runJob allows 3', async () => {
    failing.add('test');
    try {
      const s = await start('looping-servicetask', 'loop-retries', { totalLoops: 3 });
      const [job] = s.jobs;
      if (job === undefined) throw new Error('no job');
      expect(job).toMatchObject({ taskType: 'test', maxAttempts: 1 });
      expect(await deliver(job)).toMatchObject({ status: 200, body: { outcome: 'failed', attempts: 1 } });
      const instance = await instanceOf(s.instance.id);
      expect(instance.status).toBe('INCIDENT');
      expect(instance.incidents.map((i) => [i.reason, i.activityId])).toEqual([['JOB_FAILED', 'servicetask']]);
    } finally {
      failing.delete('test');
    }
  });

  test('without retries (say_hello): the system default, so the first failure is retried', async () => {
    failing.add('hello_task');
    try {
      const s = await start('hello_process', 'hello-retries', { name: 'World' });
      const [job] = s.jobs;
      if (job === undefined) throw new Error('no job');
      expect(job.maxAttempts).toBeUndefined();
      expect((await deliver(job)).status).toBe(503);
      expect((await instanceOf(s.instance.id)).status).toBe('RUNNING');
    } finally {
      failing.delete('hello_task');
    }
  });
});
