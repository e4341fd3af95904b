import request from 'supertest';
import { instanceId } from '../../functions/src/engine/ids';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';
import { jobOf, jobsOf, tokensOf } from '../support/process-state';
import { correlate } from '../../functions/src/engine/store/correlate';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { runUnitOfWork } from '../../functions/src/engine/store/unit-of-work';
import { dispatchJobs, logDuplicates } from '../../functions/src/jobs/dispatch';
import { sweepUndispatchedJobs } from '../../functions/src/jobs/sweep-jobs';
import { createLogger } from '../../functions/src/log';
import type { Message, Subscription } from '@google-cloud/pubsub';
import { freshFirestores } from '../support/firestore';
import { startProcessStack, subscribeProvider, type ProcessStack } from '../support/process-stack';
import { waitFor } from '../support/wait';

const PROCESS = 'work-order-execution';
const log = createLogger(() => undefined);
const firestore = freshFirestores();
const { db, projectId } = firestore.project('happy-path');
let stack: ProcessStack;
/** What the provider received on its topic. */
const handedOver: Message[] = [];
let provider: Subscription;

beforeAll(async () => {
  stack = await startProcessStack(db, projectId, { providerTopic: 'work-orders', maxAttempts: 2 });
  provider = await subscribeProvider(stack, 'work-orders', (m) => {
    handedOver.push(m);
  });
});
firestore.beforeTerminate(async () => {
  await provider.close();
  await stack.stop();
});

const instanceStatus = async (id: string): Promise<string | undefined> => (await refs.instance(db, id).get()).get('status') as string | undefined;
const waitingCount = async (key: string): Promise<number> => ((await refs.correlationKey(db, key).get()).get('waiting') as unknown[] | undefined)?.length ?? 0;

/** What the relay will do: correlate in a transaction, then dispatch the follow-up jobs. */
async function deliverCompletion(workOrderId: string, completedItems: number) {
  const { result } = await runUnitOfWork(db, (uow) => correlate(uow, stack.engine, { messageName: 'WorkOrderCompleted', correlationKey: workOrderId, variables: { completedItems }, now: new Date() }));
  if (result.kind === 'CORRELATED') {
    logDuplicates(log, result.duplicates);
    await dispatchJobs(stack.queue, result.jobs, log);
  }
  return result;
}

describe('the work-order process on Firestore, Cloud Tasks and Pub/Sub emulators', () => {
  test('start → hand-over job → waiting point → correlation → invoice job → COMPLETED, exactly one invoice', async () => {
    const res = await request(stack.startServer).post('/').send({ processKey: PROCESS, businessKey: 'WO-4711', variables: { workOrderId: 'WO-4711' } });
    expect(res.status).toBe(201);
    const id = res.body.processInstanceId as string;
    expect(id).toBe(instanceId(PROCESS, 'WO-4711'));

    // Cloud Tasks runs the hand-over: the provider gets the work order, the token waits.
    await waitFor('the waiting point', async () => ((await waitingCount('WO-4711')) === 1 ? true : undefined));
    await waitFor('the hand-over on the provider topic', async () => (handedOver.some((m) => m.attributes.workOrderId === 'WO-4711') ? true : undefined));

    expect((await deliverCompletion('WO-4711', 12)).kind).toBe('CORRELATED');
    await waitFor('COMPLETED', async () => ((await instanceStatus(id)) === 'COMPLETED' ? true : undefined));
    const invoices = await db.collection(COLLECTIONS.invoices).where('workOrderId', '==', 'WO-4711').get();
    expect(invoices.docs.map((d) => d.data())).toEqual([expect.objectContaining({ processInstanceId: id, completedItems: 12 })]);
    expect((await jobsOf(db, id)).map((j) => [j.activityId, j.status]).sort()).toEqual([['createInvoice', 'DONE'], ['handOverWorkOrder', 'DONE']]);
    // One document per instance: no token or job documents of their own any more.
    expect((await db.collection(COLLECTIONS.executions).where('processInstanceId', '==', id).get()).size).toBe(0);
    expect((await db.collection(COLLECTIONS.jobs).where('processInstanceId', '==', id).get()).size).toBe(0);
  });

  test('a second start answers 200 with the existing instance and no second token', async () => {
    const body = { processKey: PROCESS, businessKey: 'WO-twice', variables: { workOrderId: 'WO-twice' } };
    expect((await request(stack.startServer).post('/').send(body)).status).toBe(201);
    const again = await request(stack.startServer).post('/').send(body);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ created: false, processInstanceId: instanceId(PROCESS, 'WO-twice') });
    await waitFor('the waiting point', async () => ((await waitingCount('WO-twice')) === 1 ? true : undefined));
    expect(await tokensOf(db, again.body.processInstanceId as string)).toHaveLength(1);
  });

  test.each([
    ['no processKey', { businessKey: 'x' }, 'processKey'],
    ['unknown process', { processKey: 'nope', businessKey: 'x' }, 'unknown processKey'],
    ['empty business key', { processKey: PROCESS, businessKey: '  ' }, 'businessKey'],
    ['variables not an object', { processKey: PROCESS, businessKey: 'x', variables: [1] }, 'variables'],
    ['a reserved variable name', { processKey: PROCESS, businessKey: 'x', variables: { __name__: 1 } }, 'Firestore does not allow'],
  ])('startProcess with %s: 400 with the reason', async (_name, body, error) => {
    const res = await request(stack.startServer).post('/').send(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toContain(error);
  });

  test('a job re-run after a crash bills once: the invoice handler is idempotent', async () => {
    await request(stack.startServer).post('/').send({ processKey: PROCESS, businessKey: 'WO-crash', variables: { workOrderId: 'WO-crash' } });
    await waitFor('the waiting point', async () => ((await waitingCount('WO-crash')) === 1 ? true : undefined));
    // Correlate without dispatching, then run the invoice handler as a worker would, and "crash" before finishing the job.
    const { result } = await runUnitOfWork(db, (uow) => correlate(uow, stack.engine, { messageName: 'WorkOrderCompleted', correlationKey: 'WO-crash', variables: { completedItems: 3 }, now: new Date() }));
    if (result.kind !== 'CORRELATED') throw new Error(result.kind);
    const job = result.jobs[0]!;
    const instance = result.transition.instance;
    await stack.handlers.createInvoice!({ job, instance, now: new Date() });
    // The task is delivered (again): runJob runs the handler once more and finishes the job.
    await dispatchJobs(stack.queue, [job], log);
    await waitFor('COMPLETED', async () => ((await instanceStatus(instance.id)) === 'COMPLETED' ? true : undefined));
    const invoices = await db.collection(COLLECTIONS.invoices).where('workOrderId', '==', 'WO-crash').get();
    expect(invoices.size).toBe(1);
    expect((await jobOf(db, instance.id, job.id))?.status).toBe('DONE');
  });

  test('a job whose handler keeps failing ends FAILED with a JOB_FAILED incident, and Cloud Tasks stops', async () => {
    // The provider topic does not exist: publishing fails on every run.
    const lonely = await startProcessStack(db, projectId, { providerTopic: 'no-such-topic', maxAttempts: 2 });
    try {
      const res = await request(lonely.startServer).post('/').send({ processKey: PROCESS, businessKey: 'WO-unreachable', variables: { workOrderId: 'WO-unreachable' } });
      const id = res.body.processInstanceId as string;
      await waitFor('INCIDENT', async () => ((await instanceStatus(id)) === 'INCIDENT' ? true : undefined));
      await lonely.tasks.idle();
      const incidents = (await refs.instance(db, id).get()).get('incidents') as Array<{ reason: string }>;
      expect(incidents.map((i) => i.reason)).toEqual(['JOB_FAILED']);
      expect(await jobsOf(db, id)).toEqual([expect.objectContaining({ activityId: 'handOverWorkOrder', status: 'FAILED', attempts: 2 })]);
      // Two runs: a 503 (retry), then a 200 that ends the task.
      expect(lonely.tasks.dispatchLog.map((r) => r.status)).toEqual([503, 200]);
      expect(lonely.logs.some((l) => l.incident === 'JOB_FAILED' && l.severity === 'ERROR')).toBe(true);
    } finally {
      await lonely.stop();
    }
  });

  test('a double token: both instances INCIDENT / DUPLICATE_WAITING_POINT, and one ERROR line naming both', async () => {
    // Two work orders started under different business keys for the same workOrderId: both tokens reach the wait for WO-twin.
    const ids: string[] = [];
    for (const businessKey of ['WO-twin-a', 'WO-twin-b']) {
      const res = await request(stack.startServer).post('/').send({ processKey: PROCESS, businessKey, variables: { workOrderId: 'WO-twin' } });
      ids.push(res.body.processInstanceId as string);
      // One after the other, so the second hand-over (in runJob) is the one that creates the duplicate.
      await waitFor(`the waiting point of ${businessKey}`, async () => ((await waitingCount('WO-twin')) === ids.length ? true : undefined));
    }
    for (const id of ids) {
      const snap = await refs.instance(db, id).get();
      expect(snap.get('status')).toBe('INCIDENT');
      expect((snap.get('incidents') as Array<{ reason: string }>).map((i) => i.reason)).toEqual(['DUPLICATE_WAITING_POINT']);
    }
    const errors = stack.logs.filter((l) => l.severity === 'ERROR' && l.correlationKey === 'WO-twin');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ incident: 'DUPLICATE_WAITING_POINT', messageName: 'WorkOrderCompleted', count: 2 });
    const named = (errors[0]!.executions as Array<{ processInstanceId: string }>).map((e) => e.processInstanceId).sort();
    expect(named).toEqual([...ids].sort());
  });

  test('the sweep dispatches a job whose task was never created (crash between commit and enqueue)', async () => {
    const started = await startProcessInstance(db, stack.engine, { processKey: PROCESS, businessKey: 'WO-orphan', variables: { workOrderId: 'WO-orphan' }, now: new Date() });
    expect(started.jobs).toHaveLength(1);
    // No dispatch: the process "crashed". Nothing moves until the sweep runs.
    expect(await sweepUndispatchedJobs(db, stack.queue, log, new Date())).toBe(0); // too young
    const swept = await sweepUndispatchedJobs(db, stack.queue, log, new Date(Date.now() + 120_000));
    expect(swept).toBeGreaterThanOrEqual(1);
    await waitFor('the waiting point', async () => ((await waitingCount('WO-orphan')) === 1 ? true : undefined));
    expect((await jobOf(db, started.instance.id, started.jobs[0]!.id))?.status).toBe('DONE');
  });
});
