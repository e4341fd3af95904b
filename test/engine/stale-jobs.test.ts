import type { Firestore } from '@google-cloud/firestore';
import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import request from 'supertest';
import { join } from 'node:path';
import { loadProcessModel } from '../../functions/src/engine/deployed';
import { Engine } from '../../functions/src/engine/engine';
import { refs } from '../../functions/src/engine/store/collections';
import { cancelTokenRun } from '../../functions/src/engine/store/cancel-token';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { fireTimerRun } from '../../functions/src/engine/store/fire-timer';
import { moveToken } from '../../functions/src/engine/store/move-token';
import { recordJobFailure } from '../../functions/src/engine/store/record-job-failure';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { STALE_JOB_ERROR, type JobState } from '../../functions/src/engine/state';
import { PermanentJobError } from '../../functions/src/jobs/handlers';
import { createRunJobHandler } from '../../functions/src/jobs/run-job';
import { createLogger } from '../../functions/src/log';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import type { JobQueue } from '../../functions/src/tasks/job-queue';
import { REPO_ROOT } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { jobOf, tokenOf } from '../support/process-state';

/**
 * A job whose token no longer waits for it never moves that token: a repair
 * or an interrupting timer that takes the token away ends the job in the
 * same transaction, and runJob, a failure and a completion each find such a
 * job stale (also one left PENDING by a version before this rule). Its
 * handler is not run; a failure on its last attempt leaves the token and the
 * instance as they are.
 */
const dbs = freshFirestores();
const DAY = 24 * 3_600_000;
let engine: Engine;
let served = 0;

beforeAll(async () => {
  const model = await loadProcessModel(join(REPO_ROOT, 'test', 'fixtures', 'bpmn', 'timer-paths.bpmn'));
  engine = new Engine([model], {}, new Set(['handOver', 'settle', 'escalate']), inboxBuffer(7 * DAY));
});

const NO_QUEUE: JobQueue = { enqueue: async () => 'CREATED' };

/** runJob served in process; every handler fails for good and counts its runs; the delivery is the queue's last attempt. */
function runJob(db: Firestore): {
  deliver: (job: JobState) => Promise<{ status: number; body: Record<string, unknown> }>;
  runs: string[];
  logs: Array<Record<string, unknown>>;
} {
  const runs: string[] = [];
  const logs: Array<Record<string, unknown>> = [];
  const failing = (name: string) => async (): Promise<never> => {
    runs.push(name);
    throw new PermanentJobError(`${name} refused for good`);
  };
  const name = `staleRunJob${++served}`;
  http(
    name,
    createRunJobHandler({
      db: () => db,
      engine: async () => engine,
      queue: () => NO_QUEUE,
      timerQueue: () => NO_QUEUE,
      handlers: () => ({ handOver: failing('handOver'), escalate: failing('escalate'), settle: failing('settle') }),
      verifier: null,
      log: createLogger((line) => logs.push(JSON.parse(line) as Record<string, unknown>)),
      now: () => new Date(),
      maxAttempts: 3,
      queueMaxAttempts: 5,
    }),
  );
  const deliver = async (job: JobState): Promise<{ status: number; body: Record<string, unknown> }> => {
    const res = await request(getTestServer(name))
      .post('/')
      .set('X-CloudTasks-TaskRetryCount', '4')
      .send({ jobId: job.id, processInstanceId: job.processInstanceId });
    return { status: res.status, body: res.body as Record<string, unknown> };
  };
  return { deliver, runs, logs };
}

async function atHandOver(
  db: Firestore,
  key: string,
  variables: Record<string, unknown> = {},
): Promise<{ instanceId: string; executionId: string; job: JobState }> {
  const started = await startProcessInstance(db, engine, {
    processKey: 'timer-paths',
    businessKey: key,
    variables: { caseId: key, ...variables },
    now: new Date(),
  });
  const job = started.jobs[0];
  if (job === undefined) throw new Error('no hand-over job');
  return { instanceId: started.instance.id, executionId: job.executionId, job };
}

const instanceOf = async (db: Firestore, id: string): Promise<Record<string, unknown>> =>
  (await refs.instance(db, id).get()).data() ?? {};

describe('a repair or a timer that takes a token away ends its job', () => {
  test('move-token: the hand-over job ends stale in the same transaction; its last failing delivery runs nothing and moves nothing', async () => {
    const db = dbs('stale-move');
    const { instanceId, executionId, job } = await atHandOver(db, 'K-move');
    await moveToken(db, engine, {
      processInstanceId: instanceId,
      executionId,
      activityId: 'completedOrOverdue',
      force: false,
      now: new Date(),
    });
    expect(await jobOf(db, instanceId, job.id)).toMatchObject({ status: 'DONE', lastError: STALE_JOB_ERROR });
    const run = runJob(db);
    expect(await run.deliver(job)).toMatchObject({ status: 200, body: { outcome: 'already finished' } });
    expect(run.runs).toEqual([]);
    expect(await tokenOf(db, instanceId, executionId)).toMatchObject({
      activityId: 'completedOrOverdue',
      status: 'WAITING_EVENT',
    });
    expect(await instanceOf(db, instanceId)).toMatchObject({ status: 'RUNNING', incidents: [] });
  });

  test('cancel-token: the instance stays COMPLETED and the token cancelled when the old job fails for good', async () => {
    const db = dbs('stale-cancel');
    const { instanceId, executionId, job } = await atHandOver(db, 'K-cancel');
    await cancelTokenRun(db, engine, instanceId, executionId, new Date());
    const run = runJob(db);
    expect((await run.deliver(job)).status).toBe(200);
    expect(run.runs).toEqual([]);
    expect(await instanceOf(db, instanceId)).toMatchObject({
      status: 'COMPLETED',
      activeExecutionIds: [],
      incidents: [],
    });
    expect(await tokenOf(db, instanceId, executionId)).toMatchObject({ status: 'CANCELLED' });
  });

  test('an interrupting deadline: the escalation keeps the token; the hand-over ends stale, and the escalation job stays PENDING', async () => {
    const db = dbs('stale-deadline');
    const { instanceId, executionId, job } = await atHandOver(db, 'K-deadline', { handOverDeadline: 'PT0S' });
    const timerId = ((await tokenOf(db, instanceId, executionId))?.timerIds ?? [])[0] ?? '';
    const fired = await fireTimerRun(db, engine, timerId, new Date(Date.now() + 2_000));
    expect(fired.status).toBe('FIRED');
    const escalation = fired.jobs[0];
    expect(escalation).toMatchObject({ activityId: 'escalate' });
    const run = runJob(db);
    expect((await run.deliver(job)).status).toBe(200);
    expect(run.runs).toEqual([]);
    expect(await tokenOf(db, instanceId, executionId)).toMatchObject({
      activityId: 'escalate',
      status: 'WAITING_JOB',
      jobId: escalation?.id,
    });
    expect(await jobOf(db, instanceId, escalation?.id ?? '')).toMatchObject({ status: 'PENDING' });
    expect(await jobOf(db, instanceId, job.id)).toMatchObject({ status: 'DONE', lastError: STALE_JOB_ERROR });
    expect(await instanceOf(db, instanceId)).toMatchObject({ status: 'RUNNING', incidents: [] });
  });
});

describe('a job left PENDING while its token moved on (a version before this rule) is stale wherever it is met', () => {
  /** The state the earlier code left: the token moved to the gateway by hand-written fields, the job still PENDING. */
  async function leftBehind(
    db: Firestore,
    key: string,
  ): Promise<{ instanceId: string; executionId: string; job: JobState }> {
    const at = await atHandOver(db, key);
    await refs.instance(db, at.instanceId).update({
      [`tokens.${at.executionId}.activityId`]: 'escalate',
      [`tokens.${at.executionId}.jobId`]: 'a'.repeat(40),
      [`tokens.${at.executionId}.step`]: 9,
    });
    return at;
  }

  test("runJob's start: the handler is not run, the job ends stale, 200", async () => {
    const db = dbs('stale-start');
    const { instanceId, executionId, job } = await leftBehind(db, 'K-start');
    const run = runJob(db);
    expect(await run.deliver(job)).toMatchObject({ status: 200, body: { outcome: 'stale', jobId: job.id } });
    expect(run.runs).toEqual([]);
    expect(await jobOf(db, instanceId, job.id)).toMatchObject({ status: 'DONE', lastError: STALE_JOB_ERROR });
    expect(await tokenOf(db, instanceId, executionId)).toMatchObject({ activityId: 'escalate', step: 9 });
    expect(
      run.logs.filter(
        (l) => l.message === 'job stale: its token no longer waits for it; ended without running its handler',
      ),
    ).toHaveLength(1);
  });

  test('a failure, even a final one: STALE, the token and the instance untouched', async () => {
    const db = dbs('stale-failure');
    const { instanceId, executionId, job } = await leftBehind(db, 'K-failure');
    expect(await recordJobFailure(db, job, 'boom', 3, new Date(), { final: true })).toEqual({
      status: 'STALE',
      attempts: 1,
    });
    expect(await jobOf(db, instanceId, job.id)).toMatchObject({ status: 'DONE', lastError: STALE_JOB_ERROR });
    expect(await tokenOf(db, instanceId, executionId)).toMatchObject({
      activityId: 'escalate',
      step: 9,
      status: 'WAITING_JOB',
    });
    expect(await instanceOf(db, instanceId)).toMatchObject({ status: 'RUNNING', incidents: [] });
  });

  test('a completion: STALE, nothing moves', async () => {
    const db = dbs('stale-complete');
    const { instanceId, executionId, job } = await leftBehind(db, 'K-complete');
    expect((await completeJobRun(db, engine, job, { handedOver: true }, new Date())).status).toBe('STALE');
    expect(await tokenOf(db, instanceId, executionId)).toMatchObject({ activityId: 'escalate', step: 9 });
    expect((await instanceOf(db, instanceId)).variables).not.toHaveProperty('handedOver');
  });
});
