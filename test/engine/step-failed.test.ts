/**
 * A step the engine cannot apply (its transition throws: a token or a timer
 * of a node the deployed model no longer has) ends in a bounded, visible
 * state instead of being retried without end (issue 39): runJob ends the
 * job FAILED at its first such failure, after one run of its handler, and
 * fireTimer deletes the timer and records a STEP_FAILED incident.
 */
import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import request from 'supertest';
import { refs } from '../../functions/src/engine/store/collections';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import type { Engine } from '../../functions/src/engine/engine';
import type { InstanceState } from '../../functions/src/engine/state';
import { createFireTimerHandler } from '../../functions/src/jobs/fire-timer';
import { createLogger } from '../../functions/src/log';
import { deadlineEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { findJob, tokensOf } from '../support/process-state';
import { startProcessStack, type ProcessStack } from '../support/process-stack';

const firestore = freshFirestores();
const { db, projectId } = firestore.project('step-failed');
const logs: Array<Record<string, unknown>> = [];
const log = createLogger((l) => logs.push(JSON.parse(l) as Record<string, unknown>));
let stack: ProcessStack;
let handOvers = 0;

beforeAll(async () => {
  stack = await startProcessStack(db, projectId, {
    runJob: {
      handlers: () => ({
        handOver: async ({ instance }) => {
          handOvers += 1;
          // A handler that returns more than an instance document holds (a report, not a reference to one).
          return instance.variables.big === true ? { report: 'x'.repeat(1_100_000) } : { handedOverMessageId: 'm' };
        },
        settle: async () => ({}),
      }),
    },
  });
});
firestore.beforeTerminate(async () => {
  await stack.stop();
});

const instance = async (id: string): Promise<InstanceState> =>
  (await refs.instance(db, id).get()).data() as unknown as InstanceState;

test('runJob: a job whose completion cannot be applied runs its handler once and ends FAILED with the reason', async () => {
  const s = await startProcessInstance(db, stack.engine, {
    processKey: 'fixture-process',
    businessKey: 'C-step-job',
    variables: { caseId: 'C-step-job' },
    now: new Date(),
  });
  const job = s.jobs[0];
  if (job === undefined) throw new Error('no job');
  // As a deploy that renamed the task leaves the token: at a node the deployed model does not have.
  await refs.instance(db, s.instance.id).update({ [`tokens.${job.executionId}.activityId`]: 'handOverV1' });
  const res = await request(stack.runJobUrl).post('/').send({ jobId: job.id, processInstanceId: s.instance.id });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ outcome: 'failed', attempts: 1 });
  expect(handOvers).toBe(1);
  expect(await findJob(db, job.id)).toMatchObject({ status: 'FAILED' });
  const stored = await instance(s.instance.id);
  expect(stored.status).toBe('INCIDENT');
  expect(stored.incidents.map((i) => i.reason)).toEqual(['JOB_FAILED']);
  expect(stored.incidents[0]?.message).toMatch(
    /completing job .* at handOver: model fixture-process has no node handOverV1/,
  );
  // Cloud Tasks' next delivery finds it finished: the handler does not run again.
  const again = await request(stack.runJobUrl).post('/').send({ jobId: job.id, processInstanceId: s.instance.id });
  expect(again.status).toBe(200);
  expect(handOvers).toBe(1);
});

test('runJob: a result that would make the instance document too large ends the job FAILED, naming the variable', async () => {
  const s = await startProcessInstance(db, stack.engine, {
    processKey: 'fixture-process',
    businessKey: 'C-step-big',
    variables: { caseId: 'C-step-big', big: true },
    now: new Date(),
  });
  const job = s.jobs[0];
  if (job === undefined) throw new Error('no job');
  const before = handOvers;
  const res = await request(stack.runJobUrl).post('/').send({ jobId: job.id, processInstanceId: s.instance.id });
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({ outcome: 'failed' });
  expect(handOvers).toBe(before + 1);
  const stored = await instance(s.instance.id);
  expect(stored.incidents.map((i) => i.reason)).toEqual(['JOB_FAILED']);
  expect(stored.incidents[0]?.message).toMatch(
    /would be \d+ bytes, more than the 1000000 one document holds: .*variables\.report \(1100001 bytes, 1100001 more than stored\)/,
  );
  expect(stored.variables).not.toHaveProperty('report');
});

describe('fireTimer: a firing the engine cannot apply', () => {
  let engine: Engine;
  let fire: ReturnType<typeof getTestServer>;
  beforeAll(async () => {
    engine = await deadlineEngine();
    http(
      'fireTimerStepFailed',
      createFireTimerHandler({
        db: () => db,
        engine: async () => engine,
        queue: () => ({ enqueue: async () => 'CREATED' }),
        timerQueue: () => ({ enqueue: async () => 'CREATED' }),
        verifier: null,
        log,
        now: () => new Date(Date.now() + 3_600_000),
      }),
    );
    fire = getTestServer('fireTimerStepFailed');
  });

  test('is recorded once: the timer is deleted, the instance shows STEP_FAILED, the token waits on for its message', async () => {
    const s = await startProcessInstance(db, engine, {
      processKey: 'deadline-boundary',
      businessKey: 'C-step-timer',
      variables: { caseId: 'C-step-timer', deadline: 'PT1S' },
      now: new Date(),
    });
    const timer = s.timers[0];
    if (timer === undefined) throw new Error('no timer');
    // A timer of a boundary event a deploy renamed.
    await refs.timer(db, timer.id).update({ activityId: 'deadlineV1' });
    const res = await request(fire).post('/').send({ timerId: timer.id });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ outcome: 'failed' });
    expect((await refs.timer(db, timer.id).get()).exists).toBe(false);
    const stored = await instance(s.instance.id);
    expect(stored.status).toBe('INCIDENT');
    expect(stored.incidents.map((i) => [i.reason, i.activityId])).toEqual([['STEP_FAILED', 'deadlineV1']]);
    expect(stored.incidents[0]?.message).toMatch(
      /could not fire: firing timer .*has no node deadlineV1.*waits on without it/,
    );
    const token = (await tokensOf(db, s.instance.id)).find((t) => t.activityId === 'waitForCompletion');
    expect(token).toMatchObject({ status: 'WAITING_MESSAGE', timerIds: [] });
    expect(logs.filter((l) => l.incident === 'STEP_FAILED')).toHaveLength(1);
    // A second delivery finds nothing to fire.
    const again = await request(fire).post('/').send({ timerId: timer.id });
    expect(again.body).toMatchObject({ outcome: 'not found' });
  });
});
