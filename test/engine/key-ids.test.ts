import type { Subscription } from '@google-cloud/pubsub';
import request from 'supertest';
import { invoiceDocId } from '../../functions/src/engine/ids';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';
import { dispatchJobs } from '../../functions/src/jobs/dispatch';
import type { JobState } from '../../functions/src/engine/state';
import { createLogger } from '../../functions/src/log';
import { relayOne } from '../../functions/src/relay/relay-one';
import { freshFirestores } from '../support/firestore';
import { startProcessStack, subscribeProvider, type ProcessStack } from '../support/process-stack';
import { completionEnvelope } from '../support/push';
import { testReceiver } from '../support/receiver';
import { waitFor } from '../support/wait';

/**
 * No business key or correlation key is used raw as a document id. Keys
 * here are what Firestore refuses (or misreads) as a document id: a slash
 * (a path), "." and "..", a reserved `__x__` name. Each goes the whole way:
 * startProcess (business key), the hand-over, the receiver (correlation
 * key), the relay, the invoice (workOrderId).
 */
const PROCESS = 'work-order-execution';
const DAY = 86_400_000;
const log = createLogger(() => undefined);
const firestore = freshFirestores();
const { db, projectId } = firestore.project('key-ids');
let stack: ProcessStack;
let provider: Subscription;

beforeAll(async () => {
  stack = await startProcessStack(db, projectId, { providerTopic: 'work-orders', maxAttempts: 2 });
  provider = await subscribeProvider(stack, 'work-orders');
});
firestore.beforeTerminate(async () => {
  await provider.close();
  await stack.stop();
});

const invoicesOf = async (workOrderId: string): Promise<Array<Record<string, unknown>>> => (await db.collection(COLLECTIONS.invoices).where('workOrderId', '==', workOrderId).get()).docs.map((d) => ({ id: d.id, ...d.data() }));
const createInvoice = (workOrderId: string, instanceId: string): ReturnType<NonNullable<ProcessStack['handlers']['createInvoice']>> =>
  stack.handlers.createInvoice!({
    job: { id: `job-${instanceId}` } as JobState,
    instance: { id: instanceId, businessKey: workOrderId, variables: { workOrderId, completedItems: 1 } } as unknown as Parameters<NonNullable<ProcessStack['handlers']['createInvoice']>>[0]['instance'],
    now: new Date(),
  });

describe('keys that are not document ids', () => {
  test.each([['WO/7'], ['WO/7/lines/2'], ['..'], ['.'], ['__WO__']])('work order %j: started, handed over, completed through the receiver, relayed, invoiced once', async (workOrderId) => {
    const started = await request(stack.startServer).post('/').send({ processKey: PROCESS, businessKey: workOrderId, variables: { workOrderId } });
    expect(started.status).toBe(201);
    const instanceId = started.body.processInstanceId as string;
    await waitFor('the waiting point', async () => (((await refs.correlationKey(db, workOrderId).get()).get('waiting') as unknown[] | undefined)?.length === 1 ? true : undefined));

    const stored = await request(testReceiver(db).server).post('/').send(completionEnvelope({ workOrderId, completedItems: 4 }));
    expect(stored.body).toMatchObject({ outcome: 'stored', status: 'OPEN' });
    const relayed = await relayOne({ db, engine: stack.engine, policy: { backoffBaseMs: 1_000, backoffCapMs: 60_000, bufferWindowMs: DAY, errorAfterAttempts: 3 }, retentionMs: 7 * DAY, transactionTimeoutMs: 20_000, now: () => new Date(), random: () => 0.5 }, stored.body.id as string);
    if (relayed.kind !== 'DECIDED') throw new Error(`relay: ${relayed.kind}`);
    expect(relayed.decision).toMatchObject({ kind: 'DONE', processInstanceId: instanceId });
    await dispatchJobs(stack.queue, relayed.jobs, log);

    await waitFor('COMPLETED', async () => ((await refs.instance(db, instanceId).get()).get('status') === 'COMPLETED' ? true : undefined));
    expect(await invoicesOf(workOrderId)).toEqual([expect.objectContaining({ id: invoiceDocId(workOrderId), processInstanceId: instanceId, completedItems: 4 })]);
    // A re-run of the step bills nothing more.
    expect(await createInvoice(workOrderId, instanceId)).toMatchObject({ invoiceId: invoiceDocId(workOrderId), invoiceAlreadyExisted: true, invoicedByInstance: instanceId });
    expect(await invoicesOf(workOrderId)).toHaveLength(1);
  });

  test('an invoice written before invoice ids were hashed (invoices/{workOrderId}) still counts: no second invoice', async () => {
    await db.collection(COLLECTIONS.invoices).doc('WO-invoiced-before').create({ workOrderId: 'WO-invoiced-before', processInstanceId: 'i-before', jobId: 'j-before', completedItems: 2, createdAt: new Date() });
    expect(await createInvoice('WO-invoiced-before', 'i-now')).toEqual({ invoiceId: 'WO-invoiced-before', invoiceAlreadyExisted: true, invoicedByInstance: 'i-before' });
    expect(await invoicesOf('WO-invoiced-before')).toEqual([expect.objectContaining({ id: 'WO-invoiced-before' })]);
  });
});
