import type { Firestore } from '@google-cloud/firestore';
import request from 'supertest';
import { refs } from '../../functions/src/engine/store/collections';
import { startProcessInstance } from '../../functions/src/engine/store/operations';
import type { AsyncHandler } from '../../functions/src/jobs/handlers';
import { firestoreAt, uniqueProjectId } from '../support/firestore';
import { startProcessStack, type ProcessStack } from '../support/process-stack';

/**
 * What a job handler throws is the handler's business: whatever its message
 * (any size, any text), the failure is recorded, and the answer to Cloud Tasks
 * says whether a retry is worth it.
 */
const PROCESS = 'work-order-execution';
const projectId = uniqueProjectId('run-job-errors');
let db: Firestore;
let stack: ProcessStack;
/** What the hand-over handler throws, by business key. */
const failures = new Map<string, () => Error>();

beforeAll(async () => {
  db = firestoreAt(process.env.FIRESTORE_EMULATOR_HOST ?? '', projectId);
  const handOverWorkOrder: AsyncHandler = async ({ instance }) => {
    const failure = failures.get(instance.businessKey);
    if (failure !== undefined) throw failure();
    return {};
  };
  stack = await startProcessStack(db, projectId, { providerTopic: 'unused', maxAttempts: 5, queueMaxAttempts: 10, runJob: { handlers: () => ({ handOverWorkOrder, createInvoice: async () => ({}) }) } });
});
afterAll(async () => {
  await stack.stop();
  await db.terminate();
});

const job = async (id: string): Promise<Record<string, unknown> | undefined> => (await refs.job(db, id).get()).data();

/** A started work order whose hand-over job exists but was not dispatched: the test plays Cloud Tasks. */
async function undispatched(businessKey: string, failure: () => Error): Promise<{ instanceId: string; jobId: string }> {
  failures.set(businessKey, failure);
  const started = await startProcessInstance(db, stack.engine, { processKey: PROCESS, businessKey, variables: { workOrderId: businessKey }, now: new Date() });
  return { instanceId: started.instance.id, jobId: started.jobs[0]!.id };
}

/** One delivery as Cloud Tasks' first attempt. */
const deliver = (jobId: string) => request(stack.runJobUrl).post('/').set('X-CloudTasks-TaskRetryCount', '0').send({ jobId });

describe('runJob: any handler error text is recorded, never a failure to record it', () => {
  test.each([
    ['a lone surrogate (Firestore`s client sends it as invalid UTF-8)', () => new Error('bad \ud800'), 'bad \ufffd'],
    ['over a megabyte', () => new Error('x'.repeat(1_200_000)), 'x'.repeat(100)],
  ])('a message with %s: counted (503, attempts 1, lastError kept readable and bounded)', async (_name, failure, kept) => {
    const { jobId } = await undispatched(`WO-text-${failures.size}`, failure);
    const res = await deliver(jobId);
    expect(res.status).toBe(503);
    const stored = await job(jobId);
    expect(stored).toMatchObject({ status: 'PENDING', attempts: 1 });
    expect(String(stored?.lastError)).toContain(kept);
    expect(String(stored?.lastError).length).toBeLessThanOrEqual(2_100);
  });
});
