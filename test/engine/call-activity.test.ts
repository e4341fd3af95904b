import { join } from 'node:path';
import type { Engine } from '../../functions/src/engine/engine';
import { loadEngine } from '../../functions/src/engine/deployed';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';
import { cancelTokenRun } from '../../functions/src/engine/store/cancel-token';
import { completeJobCounted } from '../../functions/src/engine/store/complete-job';
import { fireTimerRun } from '../../functions/src/engine/store/fire-timer';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { STORED } from '../../functions/src/engine/store/converters';
import type { InstanceState, JobState } from '../../functions/src/engine/state';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import { freshFirestores } from '../support/firestore';
import { tokensOf } from '../support/process-state';
import { recordJobFailure } from '../../functions/src/engine/store/record-job-failure';
import { readInstance } from '../../functions/src/operations/instances';
import { operationsDepsFor } from '../support/operations';

/**
 * Call activities through the Firestore store on the emulator
 * (test/fixtures/bpmn-call/): an order notes itself (a child that ends at
 * once) and ships (a child with an async step), with a two-day timer on the
 * shipping. A child is started, and its end moves its caller, in the
 * transaction of the change that causes it; leaving the call terminates it.
 */
const BPMN_DIR = join(__dirname, '..', 'fixtures', 'bpmn-call');
const DAY = 86_400_000;
const fresh = freshFirestores();
const { db } = fresh.project('call-activity');
let engine: Engine;

beforeAll(async () => {
  engine = await loadEngine(BPMN_DIR, {}, new Set(['pack']), inboxBuffer(7 * DAY));
});

const instance = async (id: string): Promise<InstanceState> =>
  (await refs.instance(db, id).withConverter(STORED).get()).data() as unknown as InstanceState;
const start = (key: string) =>
  startProcessInstance(db, engine, {
    processKey: 'fixture-order',
    businessKey: key,
    variables: { orderId: key },
    now: new Date(),
  });
const children = async (callerId: string): Promise<InstanceState[]> =>
  (await db.collection(COLLECTIONS.instances).where('calledBy.instanceId', '==', callerId).get()).docs.map(
    (d) => d.data() as InstanceState,
  );

describe('call activities on the emulator', () => {
  test('the start runs a child that ends at once and starts the next; the child’s job ends both', async () => {
    const s = await start('O-1');
    const id = s.instance.id;
    const kids = await children(id);
    expect(kids.map((k) => [k.processKey, k.status, k.businessKey]).sort()).toEqual([
      ['fixture-notice', 'COMPLETED', 'O-1'],
      ['fixture-shipment', 'RUNNING', 'O-1'],
    ]);
    const shipping = kids.find((k) => k.processKey === 'fixture-shipment') as InstanceState;
    // The child's job is dispatched with the caller's start, from the same transaction.
    expect(s.jobs.map((j) => [j.activityId, j.processInstanceId])).toEqual([['pack', shipping.id]]);
    const caller = (await tokensOf(db, id)).find((t) => t.activityId === 'ship');
    expect(caller).toMatchObject({ status: 'WAITING_CALL', calledInstanceId: shipping.id });

    const done = await completeJobCounted(db, engine, s.jobs[0] as JobState, { trackingId: 'T-9' }, new Date());
    expect(done.result.status).toBe('COMPLETED');
    // One transaction: reads the child's and the caller's document; writes both and deletes the caller's timer.
    expect(done.stats).toEqual({ reads: 2, writes: 3 });
    expect(await instance(shipping.id)).toMatchObject({ status: 'COMPLETED', activeExecutionIds: [] });
    expect(await instance(id)).toMatchObject({
      status: 'COMPLETED',
      variables: { orderId: 'O-1', trackingId: 'T-9' },
    });
    expect((await db.collection(COLLECTIONS.timers).where('processInstanceId', '==', id).get()).size).toBe(0);
  });

  test('an interrupting timer on the call terminates the child: its job goes stale, the caller takes the timer’s path', async () => {
    const s = await start('O-2');
    const id = s.instance.id;
    const timers = await db.collection(COLLECTIONS.timers).where('processInstanceId', '==', id).get();
    expect(timers.size).toBe(1);
    const fired = await fireTimerRun(db, engine, timers.docs[0]?.id as string, new Date(Date.now() + 3 * DAY));
    expect(fired.status).toBe('FIRED');
    const shipping = (await children(id)).find((k) => k.processKey === 'fixture-shipment') as InstanceState;
    expect(await instance(shipping.id)).toMatchObject({
      status: 'COMPLETED',
      terminated: { reason: 'boundary timer tooLate fired' },
    });
    expect((await tokensOf(db, shipping.id)).map((t) => t.status)).toEqual(['CANCELLED']);
    expect(await instance(id)).toMatchObject({ status: 'COMPLETED' });
    expect((await tokensOf(db, id)).find((t) => t.activityId === 'abandoned')?.status).toBe('ENDED');
    // The terminated child's job is no longer live: its completion moves nothing.
    const late = await completeJobCounted(db, engine, s.jobs[0] as JobState, {}, new Date());
    expect(late.result.status).not.toBe('COMPLETED');
    expect((await instance(id)).variables).toEqual({ orderId: 'O-2' });
  });

  test('a repair that cancels the caller’s token terminates the child in the same transaction', async () => {
    const s = await start('O-3');
    const id = s.instance.id;
    const token = (await tokensOf(db, id)).find((t) => t.activityId === 'ship');
    const repaired = await cancelTokenRun(db, engine, id, token?.id as string, new Date());
    expect(repaired.alreadyApplied).toBe(false);
    const shipping = (await children(id)).find((k) => k.processKey === 'fixture-shipment') as InstanceState;
    expect(await instance(shipping.id)).toMatchObject({
      status: 'COMPLETED',
      terminated: { reason: 'a repair cancelled its token' },
    });
    expect(await instance(id)).toMatchObject({ status: 'COMPLETED' });
  });

  test('a called instance’s incident shows from its caller: its call row and the call activity’s overlay', async () => {
    const s = await start('O-4');
    const id = s.instance.id;
    const job = s.jobs[0] as JobState;
    const failed = await recordJobFailure(db, job, 'carrier refused', 5, new Date(), { final: true });
    expect(failed.status).toBe('FAILED');
    const { deps } = operationsDepsFor(db, 'call-activity', engine);
    const view = await readInstance({ ...deps, modelsDir: () => BPMN_DIR }, id);
    expect(view?.calls).toEqual([
      {
        executionId: expect.any(String) as string,
        activityId: 'ship',
        instanceId: job.processInstanceId,
        processKey: 'fixture-shipment',
        status: 'INCIDENT',
        openIncidents: [expect.objectContaining({ reason: 'JOB_FAILED', activityId: 'pack' }) as object],
      },
    ]);
    expect(view?.overlays.find((o) => o.activityId === 'ship')).toMatchObject({ tokens: 1, incidents: 1 });
    expect(view?.tokens.find((t) => t.activityId === 'ship')?.calledInstanceId).toBe(job.processInstanceId);
    const child = await readInstance({ ...deps, modelsDir: () => BPMN_DIR }, job.processInstanceId);
    expect(child?.calledBy).toEqual({ instanceId: id, activityId: 'ship' });
  });
});
