import request from 'supertest';
import { refs } from '../../functions/src/engine/store/collections';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { dispatchJobs } from '../../functions/src/jobs/dispatch';
import { type AsyncHandler, PermanentJobError } from '../../functions/src/jobs/handlers';
import { createLogger } from '../../functions/src/log';
import { freshFirestores } from '../support/firestore';
import { startProcessStack, type ProcessStack } from '../support/process-stack';
import { waitFor } from '../support/wait';
import { findJob } from '../support/process-state';

/**
 * What a job handler throws is the handler's business: whatever its message
 * (any size, any text), the failure is recorded, and the answer to Cloud Tasks
 * says whether a retry is worth it.
 */
const PROCESS = 'fixture-process';
const firestore = freshFirestores();
const { db, projectId } = firestore.project('run-job-errors');
let stack: ProcessStack;
/** What the hand-over handler throws, by business key. */
const failures = new Map<string, () => Error>();

beforeAll(async () => {
  const handOver: AsyncHandler = async ({ instance }) => {
    const failure = failures.get(instance.businessKey);
    if (failure !== undefined) throw failure();
    return {};
  };
  stack = await startProcessStack(db, projectId, {
    maxAttempts: 5,
    queueMaxAttempts: 10,
    runJob: { handlers: () => ({ handOver, settle: async () => ({}) }) },
  });
});
firestore.beforeTerminate(async () => {
  await stack.stop();
});

const job = async (id: string): Promise<Record<string, unknown> | undefined> => {
  const found = await findJob(db, id);
  return found === undefined ? undefined : { ...found };
};
const instance = async (id: string): Promise<Record<string, unknown> | undefined> =>
  (await refs.instance(db, id).get()).data();

/** A started case whose hand-over job exists but was not dispatched: the test plays Cloud Tasks. */
async function undispatched(businessKey: string, failure: () => Error): Promise<{ instanceId: string; jobId: string }> {
  failures.set(businessKey, failure);
  const started = await startProcessInstance(db, stack.engine, {
    processKey: PROCESS,
    businessKey,
    variables: { caseId: businessKey },
    now: new Date(),
  });
  return { instanceId: started.instance.id, jobId: started.jobs[0]!.id };
}

/** One delivery as Cloud Tasks' first attempt. */
const deliver = async (jobId: string) =>
  request(stack.runJobUrl)
    .post('/')
    .set('X-CloudTasks-TaskRetryCount', '0')
    .send({ jobId, processInstanceId: (await findJob(db, jobId))?.processInstanceId });

describe('runJob: any handler error text is recorded, never a failure to record it', () => {
  test.each([
    ['a lone surrogate (Firestore`s client sends it as invalid UTF-8)', () => new Error('bad \ud800'), 'bad \ufffd'],
    ['over a megabyte', () => new Error('x'.repeat(1_200_000)), 'x'.repeat(100)],
  ])(
    'a message with %s: counted (503, attempts 1, lastError kept readable and bounded)',
    async (_name, failure, kept) => {
      const { jobId } = await undispatched(`C-text-${failures.size}`, failure);
      const res = await deliver(jobId);
      expect(res.status).toBe(503);
      const stored = await job(jobId);
      expect(stored).toMatchObject({ status: 'PENDING', attempts: 1 });
      expect(String(stored?.lastError)).toContain(kept);
      expect(String(stored?.lastError).length).toBeLessThanOrEqual(2_100);
    },
  );
});

describe('runJob: a handler can say "never retry" (PermanentJobError)', () => {
  const reason = 'case is unknown to the provider: it cannot be handed over';

  test('FAILED at once, the instance INCIDENT / JOB_FAILED with the handler`s message, 200 so Cloud Tasks stops', async () => {
    const { instanceId, jobId } = await undispatched('C-permanent', () => new PermanentJobError(reason));
    const res = await deliver(jobId);
    expect({ status: res.status, body: res.body }).toEqual({
      status: 200,
      body: { outcome: 'failed', jobId, attempts: 1 },
    });
    // One of INBOX_JOB_MAX_ATTEMPTS (5) used: the rest are not burnt.
    expect(await job(jobId)).toMatchObject({ status: 'FAILED', attempts: 1, lastError: reason });
    const stored = await instance(instanceId);
    expect(stored?.status).toBe('INCIDENT');
    expect(stored?.incidents).toEqual([
      expect.objectContaining({
        reason: 'JOB_FAILED',
        activityId: 'handOver',
        message: expect.stringContaining(reason),
      }),
    ]);
    expect(stack.logs.filter((l) => l.jobId === jobId && l.severity === 'ERROR')).toEqual([
      expect.objectContaining({ incident: 'JOB_FAILED', final: 'PERMANENT', error: reason }),
    ]);
  });

  test('through Cloud Tasks: one dispatch, answered 200, no retry', async () => {
    const { instanceId, jobId } = await undispatched('C-permanent-tasks', () => new PermanentJobError(reason));
    await dispatchJobs(
      stack.queue,
      [{ id: jobId, activityId: 'handOver', processInstanceId: instanceId }],
      createLogger(() => undefined),
    );
    await waitFor('INCIDENT', async () => ((await instance(instanceId))?.status === 'INCIDENT' ? true : undefined));
    await stack.tasks.idle();
    expect(
      stack.tasks.dispatchLog.filter((d) => d.task.endsWith(jobId)).map((d) => [d.attempt, d.status, d.outcome]),
    ).toEqual([[1, 200, 'completed']]);
  });

  test('also as the cause of what the handler throws', async () => {
    const { jobId } = await undispatched(
      'C-permanent-cause',
      () => new Error('hand-over refused', { cause: new PermanentJobError(reason) }),
    );
    expect((await deliver(jobId)).body).toMatchObject({ outcome: 'failed', attempts: 1 });
    expect(await job(jobId)).toMatchObject({ status: 'FAILED', lastError: 'hand-over refused' });
  });

  test('an ordinary error is still retried (503, the job PENDING)', async () => {
    const { jobId } = await undispatched('C-ordinary', () => new Error('provider timed out'));
    expect((await deliver(jobId)).status).toBe(503);
    expect(await job(jobId)).toMatchObject({ status: 'PENDING', attempts: 1, lastError: 'provider timed out' });
  });
});
