import { join } from 'node:path';
import request from 'supertest';
import { BpmnError } from '../../functions/src/core/errors';
import { loadEngine } from '../../functions/src/engine/deployed';
import { refs } from '../../functions/src/engine/store/collections';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import type { AsyncHandler } from '../../functions/src/jobs/handlers';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import { modelsDirWith } from '../support/app';
import { freshFirestores } from '../support/firestore';
import { findJob, jobsOf, tokensOf } from '../support/process-state';
import { startProcessStack, type ProcessStack } from '../support/process-stack';
import { waitFor } from '../support/wait';

/**
 * A handler's BpmnError through runJob on the emulator
 * (test/fixtures/bpmn-errors/fixture-charge.bpmn): caught on the border of
 * the subprocess around the task (everything inside ends, the refund job is
 * created), or caught by nothing (the job FAILED, an UNCAUGHT_ERROR
 * incident naming the code). Either way Cloud Tasks gets a 200: a business
 * error is never retried.
 */
const models = modelsDirWith(join(__dirname, '..', 'fixtures', 'bpmn-errors', 'fixture-charge.bpmn'));
const firestore = freshFirestores();
const { db, projectId } = firestore.project('run-job-bpmn-errors');
let stack: ProcessStack;
/** The code the charge throws, by business key. */
const codes = new Map<string, string>();

beforeAll(async () => {
  const charge: AsyncHandler = async ({ instance }) => {
    throw new BpmnError(codes.get(instance.businessKey) ?? 'DECLINED', `card of ${instance.businessKey} declined`);
  };
  const engine = await loadEngine(
    models.dir,
    {},
    new Set(['handOver', 'settle', 'escalate', 'charge', 'refund']),
    inboxBuffer(86_400_000),
  );
  stack = await startProcessStack(db, projectId, {
    engine,
    maxAttempts: 5,
    runJob: { handlers: () => ({ charge, refund: async () => ({}) }) },
  });
});
firestore.beforeTerminate(async () => {
  await stack.stop();
  models.remove();
});

async function chargeJob(businessKey: string, code: string): Promise<{ instanceId: string; jobId: string }> {
  codes.set(businessKey, code);
  const started = await startProcessInstance(db, stack.engine, {
    processKey: 'fixture-charge',
    businessKey,
    variables: {},
    now: new Date(),
  });
  return { instanceId: started.instance.id, jobId: started.jobs[0]?.id ?? '' };
}
const deliver = (jobId: string, instanceId: string) =>
  request(stack.runJobUrl)
    .post('/')
    .set('X-CloudTasks-TaskRetryCount', '0')
    .send({ jobId, processInstanceId: instanceId });

describe('runJob: a handler throws a BpmnError', () => {
  test('caught on the subprocess: 200, the charge DONE with the error, the refund job created, nothing left inside', async () => {
    const { instanceId, jobId } = await chargeJob('P-declined', 'DECLINED');
    const res = await deliver(jobId, instanceId);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ outcome: 'caught', errorCode: 'DECLINED' });
    expect(await findJob(db, jobId)).toMatchObject({
      status: 'DONE',
      lastError: 'BPMN error DECLINED: card of P-declined declined',
    });
    // The refund job was dispatched after the commit; Cloud Tasks runs it and the instance ends at `refunded`.
    await waitFor('the instance COMPLETED', async () =>
      (await refs.instance(db, instanceId).get()).get('status') === 'COMPLETED' ? true : undefined,
    );
    expect((await jobsOf(db, instanceId)).map((j) => [j.activityId, j.status]).sort()).toEqual([
      ['charge', 'DONE'],
      ['refund', 'DONE'],
    ]);
    const tokens = await tokensOf(db, instanceId);
    expect(tokens.find((t) => t.activityId === 'refunded')?.status).toBe('ENDED');
    expect(tokens.find((t) => t.activityId === 'charge')?.status).toBe('CANCELLED');
    expect(tokens.some((t) => t.activityId === 'done')).toBe(false);
  });

  test('caught by nothing: 200, the job FAILED, an UNCAUGHT_ERROR incident naming the code; a second delivery changes nothing', async () => {
    const { instanceId, jobId } = await chargeJob('P-fraud', 'FRAUD');
    const res = await deliver(jobId, instanceId);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ outcome: 'uncaught', errorCode: 'FRAUD' });
    expect(await findJob(db, jobId)).toMatchObject({
      status: 'FAILED',
      lastError: 'BPMN error FRAUD: card of P-fraud declined',
    });
    const instance = (await refs.instance(db, instanceId).get()).data();
    expect(instance).toMatchObject({ status: 'INCIDENT' });
    expect(instance?.incidents).toEqual([
      expect.objectContaining({
        reason: 'UNCAUGHT_ERROR',
        activityId: 'charge',
        message: expect.stringContaining('BPMN error FRAUD'),
      }),
    ]);
    const again = await deliver(jobId, instanceId);
    expect(again.status).toBe(200);
    expect((await refs.instance(db, instanceId).get()).get('incidents')).toHaveLength(1);
  });
});
