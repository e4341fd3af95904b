import request from 'supertest';
import { loadConfig } from '../../functions/src/config';
import { refs } from '../../functions/src/engine/store/collections';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import type { AsyncHandler } from '../../functions/src/jobs/handlers';
import { attemptOf } from '../../functions/src/jobs/run-job';
import { sweepUndispatchedJobs } from '../../functions/src/jobs/sweep-jobs';
import { createLogger } from '../../functions/src/log';
import { emulatorClient } from '@inbox/cloud-tasks-emulator';
import { freshFirestores, uniqueProjectId } from '../support/firestore';
import { startProcessStack, type ProcessStack } from '../support/process-stack';
import { waitFor } from '../support/wait';
import { findJob, jobsOf } from '../support/process-state';

/**
 * A job must never be silently stuck: runJob ends it FAILED (instance
 * INCIDENT / JOB_FAILED) when no retry can help (no handler) and on the
 * queue's last attempt whatever failed, and sweepJobs reports at ERROR a
 * PENDING job whose task name is still taken long after it should have run.
 */
const PROCESS = 'fixture-process';
const QUEUE_MAX_ATTEMPTS = 3;
const firestore = freshFirestores();
const { db, projectId } = firestore.project('run-job-failures');
/** runJob without a handler for the hand-over. */
let noHandler: ProcessStack;
/** runJob whose handlers succeed but whose engine loader always fails: a failure outside the handler. */
let brokenEngine: ProcessStack;
/** What brokenEngine's loader throws: a defect by default (an engine that does not load). */
const ENGINE_DEFECT = new Error('engine unavailable');
let engineFailure: Error = ENGINE_DEFECT;
const brokenProject = uniqueProjectId('run-job-engine');

const succeeding: Readonly<Record<string, AsyncHandler>> = {
  handOver: async () => ({ handedOverMessageId: 'm' }),
  settle: async () => ({}),
};

beforeAll(async () => {
  noHandler = await startProcessStack(db, projectId, { runJob: { handlers: () => ({ settle: async () => ({}) }) } });
  brokenEngine = await startProcessStack(db, brokenProject, {
    queueMaxAttempts: QUEUE_MAX_ATTEMPTS,
    runJob: {
      handlers: () => succeeding,
      engine: async () => {
        throw engineFailure;
      },
    },
  });
});
firestore.beforeTerminate(async () => {
  await noHandler.stop();
  await brokenEngine.stop();
});

const job = async (id: string): Promise<Record<string, unknown> | undefined> => {
  const found = await findJob(db, id);
  return found === undefined ? undefined : { ...found };
};
const instance = async (id: string): Promise<Record<string, unknown> | undefined> =>
  (await refs.instance(db, id).get()).data();

/** A started case whose hand-over job exists but was not dispatched: the test plays Cloud Tasks. */
async function undispatched(businessKey: string): Promise<{ instanceId: string; jobId: string }> {
  const started = await startProcessInstance(db, brokenEngine.engine, {
    processKey: PROCESS,
    businessKey,
    variables: { caseId: businessKey },
    now: new Date(),
  });
  return { instanceId: started.instance.id, jobId: started.jobs[0]!.id };
}

/** One delivery of the job as Cloud Tasks would send it, as attempt `retryCount` + 1 (no header: not Cloud Tasks). */
const deliver = async (stack: ProcessStack, jobId: string, retryCount?: number) => {
  // The body runJob's queue sends: the job and its instance (the job lives in the instance's document).
  const body = { jobId, processInstanceId: (await findJob(db, jobId))?.processInstanceId };
  const r = request(stack.runJobUrl).post('/');
  return retryCount === undefined ? r.send(body) : r.set('X-CloudTasks-TaskRetryCount', String(retryCount)).send(body);
};

describe('attemptOf: the attempt number from X-CloudTasks-TaskRetryCount', () => {
  test.each([
    ['0', 1],
    ['19', 20],
    [' 2 ', 3],
    [undefined, null],
    ['', null],
    ['-1', null],
    ['1.5', null],
    ['x', null],
  ])('%p → %p', (header, attempt) => {
    expect(attemptOf(header)).toBe(attempt);
  });
});

describe('runJob: a job never stays PENDING after its last chance', () => {
  test('no handler for the job: FAILED and INCIDENT / JOB_FAILED on the first attempt, 200 so Cloud Tasks stops', async () => {
    const res = await request(noHandler.startServer)
      .post('/')
      .send({ processKey: PROCESS, businessKey: 'C-no-handler', variables: { caseId: 'C-no-handler' } });
    const id = res.body.processInstanceId as string;
    await waitFor('INCIDENT', async () => ((await instance(id))?.status === 'INCIDENT' ? true : undefined));
    await noHandler.tasks.idle();
    expect(noHandler.tasks.dispatchLog.map((d) => [d.attempt, d.status, d.outcome])).toEqual([[1, 200, 'completed']]);
    expect((await instance(id))?.incidents).toEqual([
      expect.objectContaining({ reason: 'JOB_FAILED', activityId: 'handOver' }),
    ]);
    const [jobId] = (await jobsOf(db, id)).map((j) => j.id);
    expect(await job(jobId!)).toMatchObject({
      status: 'FAILED',
      attempts: 1,
      lastError: 'no async handler registered for handOver',
    });
    const errors = noHandler.logs.filter((l) => l.severity === 'ERROR' && l.jobId === jobId);
    expect(errors).toEqual([expect.objectContaining({ incident: 'JOB_FAILED', final: 'PERMANENT' })]);
  });

  test('a defect outside the handler that persists: 500 until the queue`s last attempt, then FAILED / INCIDENT and 200', async () => {
    const res = await request(brokenEngine.startServer)
      .post('/')
      .send({ processKey: PROCESS, businessKey: 'C-broken', variables: { caseId: 'C-broken' } });
    const id = res.body.processInstanceId as string;
    await waitFor('INCIDENT', async () => ((await instance(id))?.status === 'INCIDENT' ? true : undefined));
    await brokenEngine.tasks.idle();
    // Attempts 1 and 2 answered 500 (a defect; Cloud Tasks retries any 5xx); attempt 3 is the queue's last: recorded, answered 200, the task completes.
    expect(brokenEngine.tasks.dispatchLog.map((d) => [d.attempt, d.status, d.outcome])).toEqual([
      [1, 500, 'retrying'],
      [2, 500, 'retrying'],
      [3, 200, 'completed'],
    ]);
    expect((await instance(id))?.incidents).toEqual([
      expect.objectContaining({
        reason: 'JOB_FAILED',
        activityId: 'handOver',
        message: expect.stringContaining('engine unavailable'),
      }),
    ]);
    const [jobId] = (await jobsOf(db, id)).map((j) => j.id);
    // Failures outside the handler are not the step's fault: only the final one is counted.
    expect(await job(jobId!)).toMatchObject({ status: 'FAILED', attempts: 1, lastError: 'engine unavailable' });
    // A defect is an ERROR on every attempt (the errors metric shows it); the incident once, on the last.
    const defect = 'job run failed unexpectedly before it could finish; Cloud Tasks will retry';
    expect(brokenEngine.logs.filter((l) => l.severity === 'ERROR' && l.jobId === jobId)).toEqual([
      expect.objectContaining({ message: defect, attempt: 1, code: 'UNKNOWN' }),
      expect.objectContaining({ message: defect, attempt: 2, code: 'UNKNOWN' }),
      expect.objectContaining({ incident: 'JOB_FAILED', final: 'LAST_ATTEMPT', attempt: 3 }),
    ]);
  });

  test('below the last attempt (or without the header): 500 for a defect, 503 for what a retry heals; the job stays PENDING, the instance RUNNING', async () => {
    const { instanceId, jobId } = await undispatched('C-below-last');
    const unavailable = Object.assign(new Error('engine store unavailable'), { code: 14 });
    const cases: Array<[number | undefined, Error, number, boolean]> = [
      [undefined, ENGINE_DEFECT, 500, false],
      [0, ENGINE_DEFECT, 500, false],
      [QUEUE_MAX_ATTEMPTS - 2, ENGINE_DEFECT, 500, false],
      [0, unavailable, 503, true],
    ];
    try {
      for (const [retryCount, failure, status, retry] of cases) {
        engineFailure = failure;
        const res = await deliver(brokenEngine, jobId, retryCount);
        expect({ status: res.status, retry: res.body.retry }).toEqual({ status, retry });
        expect(await job(jobId)).toMatchObject({ status: 'PENDING', attempts: 0 });
        expect(await instance(instanceId)).toMatchObject({ status: 'RUNNING', incidents: [] });
      }
    } finally {
      engineFailure = ENGINE_DEFECT;
    }
    // The last one of the queue's attempts ends it.
    const last = await deliver(brokenEngine, jobId, QUEUE_MAX_ATTEMPTS - 1);
    expect(last.status).toBe(200);
    expect(last.body).toMatchObject({ outcome: 'failed', jobId });
    expect(await job(jobId)).toMatchObject({ status: 'FAILED' });
    expect(await instance(instanceId)).toMatchObject({ status: 'INCIDENT' });
    // A late duplicate delivery changes nothing.
    expect((await deliver(brokenEngine, jobId, QUEUE_MAX_ATTEMPTS - 1)).body).toMatchObject({
      outcome: 'already finished',
    });
  });

  test('a handler failure on the queue`s last attempt ends the job even before INBOX_JOB_MAX_ATTEMPTS failures', async () => {
    const failing = await startProcessStack(db, projectId, {
      maxAttempts: 10,
      queueMaxAttempts: QUEUE_MAX_ATTEMPTS,
      runJob: { handlers: () => ({ ...succeeding, handOver: async () => Promise.reject(new Error('provider down')) }) },
    });
    try {
      const started = await startProcessInstance(db, failing.engine, {
        processKey: PROCESS,
        businessKey: 'C-handler-last',
        variables: { caseId: 'C-handler-last' },
        now: new Date(),
      });
      const jobId = started.jobs[0]!.id;
      expect((await deliver(failing, jobId, 0)).status).toBe(503);
      expect(await job(jobId)).toMatchObject({ status: 'PENDING', attempts: 1 });
      expect((await deliver(failing, jobId, QUEUE_MAX_ATTEMPTS - 1)).status).toBe(200);
      expect(await job(jobId)).toMatchObject({ status: 'FAILED', attempts: 2, lastError: 'provider down' });
      expect(await instance(started.instance.id)).toMatchObject({ status: 'INCIDENT' });
    } finally {
      await failing.stop();
    }
  });
});

describe('sweepJobs: a PENDING job whose task name stays taken is reported at ERROR', () => {
  test('ALREADY_EXISTS for a job older than the stuck threshold is an ERROR naming the job; a younger one is INFO', async () => {
    const { jobId, instanceId } = await undispatched('C-stuck');
    // The task exists but does not run: its queue is paused (for the sweep as good as a task Cloud Tasks dropped, whose name stays reserved).
    const { location, queue } = loadConfig({ GOOGLE_CLOUD_PROJECT: brokenProject, INBOX_PUSH_AUTH: 'disabled' }).tasks;
    const admin = emulatorClient(brokenEngine.tasks.host);
    await admin.pauseQueue({ name: `projects/${brokenProject}/locations/${location}/queues/${queue}` });
    await admin.close();
    expect(await brokenEngine.queue.enqueue(jobId)).toBe('CREATED');

    const lines: Array<Record<string, unknown>> = [];
    const log = createLogger((line) => lines.push(JSON.parse(line) as Record<string, unknown>));
    const young = new Date(Date.now() + 5 * 60_000);
    await sweepUndispatchedJobs(db, brokenEngine.queue, log, young, { graceMs: 60_000, stuckAfterMs: 3_600_000 });
    expect(lines.filter((l) => l.jobId === jobId).map((l) => [l.severity, l.message])).toEqual([
      ['INFO', 'job task already existed'],
    ]);

    lines.length = 0;
    const old = new Date(Date.now() + 2 * 3_600_000);
    await sweepUndispatchedJobs(db, brokenEngine.queue, log, old, { graceMs: 60_000, stuckAfterMs: 3_600_000 });
    const mine = lines.filter((l) => l.jobId === jobId);
    expect(mine).toEqual([
      expect.objectContaining({
        severity: 'ERROR',
        incident: 'JOB_STUCK',
        activityId: 'handOver',
        processInstanceId: instanceId,
      }),
    ]);
    expect(mine[0]!.ageMs).toBeGreaterThanOrEqual(2 * 3_600_000 - 60_000);
    expect(await job(jobId)).toMatchObject({ status: 'PENDING' });
  });
});
