import { join } from 'node:path';
import type { Subscription } from '@google-cloud/pubsub';
import { DEFAULTS } from '../../../functions/src/config';
import { refs } from '../../../functions/src/engine/store/collections';
import type { JobState } from '../../../functions/src/engine/state';
import { INBOX } from '../../../functions/src/inbox/document';
import { createGcsPayloadStore } from '../../../functions/src/storage/gcs-payload-store';
import type { PayloadStore } from '../../../functions/src/storage/payload-store';
import {
  lineItems,
  reportReference,
  type StoredAs,
  storeOffloaded,
  storeReferenced,
  uploadReport,
} from '../../../test/support/claims';
import { freshFirestores } from '../../../test/support/firestore';
import { storePushed } from '../../../test/support/inbox';
import { relayOnStack, startOverHttp, waitingOn } from '../../../test/support/pipeline';
import { jobsOf } from '../../../test/support/process-state';
import { startProcessStack, subscribeCounterpart, type ProcessStack } from '../../../test/support/process-stack';
import { useTestStorage } from '../../../test/support/storage';
import { waitFor } from '../../../test/support/wait';
import workOrders from '../index';
import { INVOICES, invoiceRef, WORK_ORDER_REGISTRY } from '../local/names';

/**
 * The example's "Create invoice" on the emulators: started through
 * startProcess, its hand-over run through Cloud Tasks (emulator) and runJob,
 * the completion stored as the receiver stores it (inline, a sender's
 * reference, or an offloaded payload), the relay correlates it and
 * dispatches "Create invoice", and runJob bills the completion report's
 * line items, read from the storage emulator pinned to its generation. An
 * invoice written before invoice ids were hashed still counts. (The
 * system's own claim-check path is tested with the fixture app, in
 * test/e2e/claim-check-settle.test.ts.)
 */
const REPORTS = 'sender-reports-wo';
const PAYLOADS = 'inbox-payloads-wo';
const COMPLETED: StoredAs = { registry: WORK_ORDER_REGISTRY, name: 'WorkOrderCompleted' };
const storage = useTestStorage([REPORTS, PAYLOADS]);
const firestore = freshFirestores();
const { db, projectId } = firestore.project('wo-invoice');
let stack: ProcessStack;
let provider: Subscription;
let store: PayloadStore;

beforeAll(async () => {
  store = createGcsPayloadStore(projectId);
  stack = await startProcessStack(db, projectId, {
    app: { app: workOrders, folder: join(__dirname, '..') },
    maxAttempts: 2,
    payloadStore: () => store,
  });
  provider = await subscribeCounterpart(stack);
});
firestore.beforeTerminate(async () => {
  await provider.close();
  await stack.stop();
});

const completion = (workOrderId: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  workOrderId,
  completedItems: 5,
  completionTimestamp: '2026-11-29T10:00:00Z',
  ...extra,
});
const relay = (): ReturnType<typeof relayOnStack> => relayOnStack(db, stack, () => store);

/** Starts the work order through startProcess and waits until its token waits for the completion. */
async function started(workOrderId: string): Promise<string> {
  const instanceId = await startOverHttp(stack, 'work-order-execution', workOrderId, { workOrderId });
  await waitingOn(db, workOrderId);
  return instanceId;
}

const invoiceOf = (workOrderId: string): Promise<Record<string, unknown>> =>
  waitFor(`the invoice of ${workOrderId}`, async () => (await invoiceRef(db, workOrderId).get()).data());
const statusOf = async (instanceId: string): Promise<unknown> =>
  (await refs.instance(db, instanceId).get()).get('status');
const incidentsOf = async (instanceId: string): Promise<Array<Record<string, unknown>>> =>
  (await refs.instance(db, instanceId).get()).get('incidents') as Array<Record<string, unknown>>;

describe('"Create invoice": a completion report billed, receipt to invoice', () => {
  test("by reference: 2,500 line items in the sender's object, billed 2,500", async () => {
    const instanceId = await started('WO-claim-ref');
    const ref = await uploadReport(store, REPORTS, 'reports/WO-claim-ref.json', {
      workOrderId: 'WO-claim-ref',
      lineItems: lineItems(2_500),
    });
    const reference = reportReference(ref, COMPLETED);
    const id = await storeReferenced(
      db,
      completion('WO-claim-ref', { completedItems: 1 }),
      reference,
      new Date(),
      COMPLETED,
    );
    expect((await relay()).correlated).toBeGreaterThanOrEqual(1);
    expect((await db.collection(INBOX).doc(id).get()).get('status')).toBe('DONE');
    expect(await invoiceOf('WO-claim-ref')).toMatchObject({
      workOrderId: 'WO-claim-ref',
      processInstanceId: instanceId,
      billedItems: 2_500,
      lineItemCount: 2_500,
      report: reference.uri,
      completedItems: 1,
    });
    await waitFor('COMPLETED', async () => ((await statusOf(instanceId)) === 'COMPLETED' ? true : undefined));
  });

  test("offloaded: a 3,000-item completion over INBOX_OFFLOAD_BYTES, kept in the inbox's bucket, billed 3,000", async () => {
    const instanceId = await started('WO-claim-off');
    const { id, offloaded, bytes } = await storeOffloaded(
      db,
      store,
      PAYLOADS,
      completion('WO-claim-off', { lineItems: lineItems(3_000, 200) }),
      new Date(),
      COMPLETED,
    );
    expect(bytes.length).toBeGreaterThan(DEFAULTS.INBOX_OFFLOAD_BYTES);
    await relay();
    expect((await db.collection(INBOX).doc(id).get()).get('status')).toBe('DONE');
    expect(await invoiceOf('WO-claim-off')).toMatchObject({
      billedItems: 3_000,
      lineItemCount: 3_000,
      report: offloaded.uri,
      completedItems: 5,
    });
    await waitFor('COMPLETED', async () => ((await statusOf(instanceId)) === 'COMPLETED' ? true : undefined));
  });

  test('no claim: inline lineItems are billed; without them completedItems, as before', async () => {
    await started('WO-claim-inline');
    await started('WO-claim-plain');
    await storePushed(db, {
      name: 'WorkOrderCompleted',
      registry: WORK_ORDER_REGISTRY,
      payload: completion('WO-claim-inline', { completedItems: 2, lineItems: lineItems(7) }),
    });
    await storePushed(db, {
      name: 'WorkOrderCompleted',
      registry: WORK_ORDER_REGISTRY,
      payload: completion('WO-claim-plain', { completedItems: 9 }),
    });
    await relay();
    expect(await invoiceOf('WO-claim-inline')).toMatchObject({
      billedItems: 7,
      lineItemCount: 7,
      report: null,
      completedItems: 2,
    });
    expect(await invoiceOf('WO-claim-plain')).toMatchObject({
      billedItems: 9,
      lineItemCount: null,
      report: null,
      completedItems: 9,
    });
  });

  test('the object deleted by hand before the job ran: no invoice, the instance INCIDENT / JOB_FAILED saying MISSING', async () => {
    const instanceId = await started('WO-claim-lost');
    const { offloaded } = await storeOffloaded(
      db,
      store,
      PAYLOADS,
      completion('WO-claim-lost', { lineItems: lineItems(3) }),
      new Date(),
      COMPLETED,
    );
    await storage.current.client.bucket(PAYLOADS).file(offloaded.object).delete();
    await relay();
    await waitFor('INCIDENT', async () => ((await statusOf(instanceId)) === 'INCIDENT' ? true : undefined));
    expect(await incidentsOf(instanceId)).toEqual([
      expect.objectContaining({
        reason: 'JOB_FAILED',
        activityId: 'createInvoice',
        message: expect.stringContaining(`${offloaded.uri} is MISSING`),
      }),
    ]);
    expect((await invoiceRef(db, 'WO-claim-lost').get()).exists).toBe(false);
  });

  test("a report that is not one (valid JSON, no lineItems): JOB_FAILED with the schema's words, not retried", async () => {
    const instanceId = await started('WO-claim-bad');
    const ref = await uploadReport(store, REPORTS, 'reports/WO-claim-bad.json', { items: [] });
    await storeReferenced(db, completion('WO-claim-bad'), reportReference(ref, COMPLETED), new Date(), COMPLETED);
    await relay();
    await waitFor('INCIDENT', async () => ((await statusOf(instanceId)) === 'INCIDENT' ? true : undefined));
    expect(await incidentsOf(instanceId)).toEqual([
      expect.objectContaining({ reason: 'JOB_FAILED', message: expect.stringContaining('is not a completion report') }),
    ]);
    const jobs = (await jobsOf(db, instanceId)).filter((j) => j.activityId === 'createInvoice');
    expect(jobs.map((j) => [j.status, j.attempts])).toEqual([['FAILED', 1]]);
  });

  test('the report of another work order: JOB_FAILED naming both, nobody billed for items that are not theirs', async () => {
    const instanceId = await started('WO-claim-other');
    const ref = await uploadReport(store, REPORTS, 'reports/WO-claim-other.json', {
      workOrderId: 'WO-someone-else',
      lineItems: lineItems(4),
    });
    await storeReferenced(db, completion('WO-claim-other'), reportReference(ref, COMPLETED), new Date(), COMPLETED);
    await relay();
    await waitFor('INCIDENT', async () => ((await statusOf(instanceId)) === 'INCIDENT' ? true : undefined));
    expect(await incidentsOf(instanceId)).toEqual([
      expect.objectContaining({
        reason: 'JOB_FAILED',
        message: expect.stringContaining('the report of work order WO-someone-else, not WO-claim-other'),
      }),
    ]);
    expect((await invoiceRef(db, 'WO-claim-other').get()).exists).toBe(false);
  });
});

describe('the invoice id', () => {
  const invoicesOf = async (workOrderId: string): Promise<Array<Record<string, unknown>>> =>
    (await db.collection(INVOICES).where('workOrderId', '==', workOrderId).get()).docs.map((d) => ({
      id: d.id,
      ...d.data(),
    }));
  const createInvoice = (
    workOrderId: string,
    instanceId: string,
  ): ReturnType<NonNullable<ProcessStack['handlers']['createInvoice']>> =>
    stack.handlers.createInvoice!({
      job: { id: `job-${instanceId}` } as JobState,
      instance: {
        id: instanceId,
        businessKey: workOrderId,
        variables: { workOrderId, completedItems: 1 },
      } as unknown as Parameters<NonNullable<ProcessStack['handlers']['createInvoice']>>[0]['instance'],
      now: new Date(),
    });

  test('an invoice written before invoice ids were hashed (invoices/{workOrderId}) still counts: no second invoice', async () => {
    await db.collection(INVOICES).doc('WO-invoiced-before').create({
      workOrderId: 'WO-invoiced-before',
      processInstanceId: 'i-before',
      jobId: 'j-before',
      completedItems: 2,
      createdAt: new Date(),
    });
    expect(await createInvoice('WO-invoiced-before', 'i-now')).toEqual({
      invoiceId: 'WO-invoiced-before',
      invoiceAlreadyExisted: true,
      invoicedByInstance: 'i-before',
    });
    expect(await invoicesOf('WO-invoiced-before')).toEqual([expect.objectContaining({ id: 'WO-invoiced-before' })]);
  });

  test('a work order id that is no document id (WO/7) gets a hashed invoice id, and a re-run finds it', async () => {
    const first = await createInvoice('WO/7', 'i-slash');
    expect(first).toEqual({ invoiceId: invoiceRef(db, 'WO/7').id, billedItems: 1 });
    expect(await createInvoice('WO/7', 'i-slash-again')).toEqual({
      invoiceId: invoiceRef(db, 'WO/7').id,
      invoiceAlreadyExisted: true,
      invoicedByInstance: 'i-slash',
    });
    expect(await invoicesOf('WO/7')).toHaveLength(1);
  });
});
