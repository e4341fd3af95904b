import type { Subscription } from '@google-cloud/pubsub';
import { DEFAULTS } from '../../functions/src/config';
import { refs } from '../../functions/src/engine/store/collections';
import { INBOX } from '../../functions/src/inbox/document';
import { createGcsPayloadStore } from '../../functions/src/storage/gcs-payload-store';
import type { PayloadStore } from '../../functions/src/storage/payload-store';
import { lineItems, reportReference, storeOffloaded, storeReferenced, uploadReport } from '../support/claims';
import { freshFirestores } from '../support/firestore';
import { storePushed, completionPayload } from '../support/inbox';
import { startProcessStack, subscribeCounterpart, type ProcessStack } from '../support/process-stack';
import { useTestStorage } from '../support/storage';
import { waitFor } from '../support/wait';
import { jobsOf } from '../support/process-state';
import { relayOnStack, startOverHttp, waitingOn } from '../support/pipeline';
import { settlementRef } from '../support/app';

/**
 * Both claim-check routes end to end (issue 17, decision 1): the process is
 * started through startProcess, its hand-over runs through Cloud Tasks
 * (emulator) and runJob, the completion is stored as the receiver stores it
 * (a sender's reference, or an offloaded payload), the relay correlates it
 * and dispatches the fixture app's "Settle", and runJob counts the report's
 * line items, read through the app's readClaim from the storage emulator,
 * pinned to its generation. (An example app tests its own steps beside
 * it, in examples/APP/test/.)
 */
const REPORTS = 'sender-reports-e2e';
const PAYLOADS = 'inbox-payloads-e2e';
const storage = useTestStorage([REPORTS, PAYLOADS]);
const firestore = freshFirestores();
const { db, projectId } = firestore.project('claims-e2e');
let stack: ProcessStack;
let counterpart: Subscription;
let store: PayloadStore;

beforeAll(async () => {
  store = createGcsPayloadStore(projectId);
  stack = await startProcessStack(db, projectId, { maxAttempts: 2, payloadStore: () => store });
  counterpart = await subscribeCounterpart(stack);
});
firestore.beforeTerminate(async () => {
  await counterpart.close();
  await stack.stop();
});

const relay = (): ReturnType<typeof relayOnStack> => relayOnStack(db, stack, () => store);

/** Starts the case through startProcess and waits until its token waits for the completion. */
async function started(caseId: string): Promise<string> {
  const instanceId = await startOverHttp(stack, 'fixture-process', caseId, { caseId });
  await waitingOn(db, caseId);
  return instanceId;
}

const settlementOf = (caseId: string): Promise<Record<string, unknown>> =>
  waitFor(`the settlement of ${caseId}`, async () => (await settlementRef(db, caseId).get()).data());
const statusOf = async (instanceId: string): Promise<unknown> =>
  (await refs.instance(db, instanceId).get()).get('status');

describe('claim check, receipt to settlement', () => {
  test("by reference: 2,500 line items in the sender's object, billed 2,500", async () => {
    const instanceId = await started('C-claim-ref');
    const ref = await uploadReport(store, REPORTS, 'reports/C-claim-ref.json', {
      caseId: 'C-claim-ref',
      lineItems: lineItems(2_500),
    });
    const reference = reportReference(ref);
    const id = await storeReferenced(db, completionPayload('C-claim-ref', { completedItems: 1 }), reference);
    expect((await relay()).correlated).toBeGreaterThanOrEqual(1);
    expect((await db.collection(INBOX).doc(id).get()).get('status')).toBe('DONE');
    const settlement = await settlementOf('C-claim-ref');
    expect(settlement).toMatchObject({
      caseId: 'C-claim-ref',
      processInstanceId: instanceId,
      billedItems: 2_500,
      lineItemCount: 2_500,
      report: reference.uri,
      completedItems: 1,
    });
    await waitFor('COMPLETED', async () => ((await statusOf(instanceId)) === 'COMPLETED' ? true : undefined));
  });

  test("offloaded: a 3,000-item completion over INBOX_OFFLOAD_BYTES, kept in the inbox's bucket, billed 3,000", async () => {
    const instanceId = await started('C-claim-off');
    const { id, offloaded, bytes } = await storeOffloaded(
      db,
      store,
      PAYLOADS,
      completionPayload('C-claim-off', { lineItems: lineItems(3_000, 200) }),
    );
    expect(bytes.length).toBeGreaterThan(DEFAULTS.INBOX_OFFLOAD_BYTES);
    await relay();
    expect((await db.collection(INBOX).doc(id).get()).get('status')).toBe('DONE');
    expect(await settlementOf('C-claim-off')).toMatchObject({
      billedItems: 3_000,
      lineItemCount: 3_000,
      report: offloaded.uri,
      completedItems: 5,
    });
    await waitFor('COMPLETED', async () => ((await statusOf(instanceId)) === 'COMPLETED' ? true : undefined));
  });

  test('no claim: inline lineItems are billed; without them completedItems, as before', async () => {
    await started('C-claim-inline');
    await started('C-claim-plain');
    await storePushed(db, {
      name: 'TaskCompleted',
      payload: completionPayload('C-claim-inline', { completedItems: 2, lineItems: lineItems(7) }),
    });
    await storePushed(db, {
      name: 'TaskCompleted',
      payload: completionPayload('C-claim-plain', { completedItems: 9 }),
    });
    await relay();
    expect(await settlementOf('C-claim-inline')).toMatchObject({
      billedItems: 7,
      lineItemCount: 7,
      report: null,
      completedItems: 2,
    });
    expect(await settlementOf('C-claim-plain')).toMatchObject({
      billedItems: 9,
      lineItemCount: null,
      report: null,
      completedItems: 9,
    });
  });

  test('the object deleted by hand before the job ran: no settlement, the instance INCIDENT / JOB_FAILED saying MISSING', async () => {
    const instanceId = await started('C-claim-lost');
    const { offloaded } = await storeOffloaded(
      db,
      store,
      PAYLOADS,
      completionPayload('C-claim-lost', { lineItems: lineItems(3) }),
    );
    // Offloaded payloads are the inbox's own objects: the relay does not stat them, the job is where it shows.
    await storage.current.client.bucket(PAYLOADS).file(offloaded.object).delete();
    await relay();
    await waitFor('INCIDENT', async () => ((await statusOf(instanceId)) === 'INCIDENT' ? true : undefined));
    const incidents = (await refs.instance(db, instanceId).get()).get('incidents') as Array<Record<string, unknown>>;
    expect(incidents).toEqual([
      expect.objectContaining({
        reason: 'JOB_FAILED',
        activityId: 'settle',
        message: expect.stringContaining(`${offloaded.uri} is MISSING`),
      }),
    ]);
    expect((await settlementRef(db, 'C-claim-lost').get()).exists).toBe(false);
  });

  test("a report that is not one (valid JSON, no lineItems): JOB_FAILED with the schema's words, not retried", async () => {
    const instanceId = await started('C-claim-bad');
    const ref = await uploadReport(store, REPORTS, 'reports/C-claim-bad.json', { items: [] });
    await storeReferenced(db, completionPayload('C-claim-bad'), reportReference(ref));
    await relay();
    await waitFor('INCIDENT', async () => ((await statusOf(instanceId)) === 'INCIDENT' ? true : undefined));
    const incidents = (await refs.instance(db, instanceId).get()).get('incidents') as Array<Record<string, unknown>>;
    expect(incidents).toEqual([
      expect.objectContaining({ reason: 'JOB_FAILED', message: expect.stringContaining('is not a completion report') }),
    ]);
    const jobs = (await jobsOf(db, instanceId)).filter((j) => j.activityId === 'settle');
    expect(jobs.map((j) => [j.status, j.attempts])).toEqual([['FAILED', 1]]);
  });

  test('the report of another case: JOB_FAILED naming both, nobody billed for items that are not theirs', async () => {
    const instanceId = await started('C-claim-other');
    const ref = await uploadReport(store, REPORTS, 'reports/C-claim-other.json', {
      caseId: 'C-someone-else',
      lineItems: lineItems(4),
    });
    await storeReferenced(db, completionPayload('C-claim-other'), reportReference(ref));
    await relay();
    await waitFor('INCIDENT', async () => ((await statusOf(instanceId)) === 'INCIDENT' ? true : undefined));
    const incidents = (await refs.instance(db, instanceId).get()).get('incidents') as Array<Record<string, unknown>>;
    expect(incidents).toEqual([
      expect.objectContaining({
        reason: 'JOB_FAILED',
        message: expect.stringContaining('the report of case C-someone-else, not C-claim-other'),
      }),
    ]);
    expect((await settlementRef(db, 'C-claim-other').get()).exists).toBe(false);
  });
});
