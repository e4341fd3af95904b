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
import { startProcessStack, subscribeCounterpart, type ProcessStack } from '../support/process-stack';
import { waitFor } from '../support/wait';
import { SETTLEMENTS } from '../support/app';

const PROCESS = 'fixture-process';
const log = createLogger(() => undefined);
const firestore = freshFirestores();
const { db, projectId } = firestore.project('happy-path');
let stack: ProcessStack;
/** What the counterpart received on its topic. */
const handedOver: Message[] = [];
let counterpart: Subscription;

beforeAll(async () => {
  stack = await startProcessStack(db, projectId, { maxAttempts: 2 });
  counterpart = await subscribeCounterpart(stack, (m) => {
    handedOver.push(m);
  });
});
firestore.beforeTerminate(async () => {
  await counterpart.close();
  await stack.stop();
});

const instanceStatus = async (id: string): Promise<string | undefined> =>
  (await refs.instance(db, id).get()).get('status') as string | undefined;
const waitingCount = async (key: string): Promise<number> =>
  ((await refs.correlationKey(db, key).get()).get('waiting') as unknown[] | undefined)?.length ?? 0;

/** What the relay will do: correlate in a transaction, then dispatch the follow-up jobs. */
async function deliverCompletion(caseId: string, completedItems: number) {
  const { result } = await runUnitOfWork(db, (uow) =>
    correlate(uow, stack.engine, {
      messageName: 'TaskCompleted',
      correlationKey: caseId,
      variables: { completedItems },
      now: new Date(),
    }),
  );
  if (result.kind === 'CORRELATED') {
    logDuplicates(log, result.duplicates);
    await dispatchJobs(stack.queue, result.jobs, log);
  }
  return result;
}

describe('the fixture process on Firestore, Cloud Tasks and Pub/Sub emulators', () => {
  test('start → hand-over job → waiting point → correlation → settlement job → COMPLETED, exactly one settlement', async () => {
    const res = await request(stack.startServer)
      .post('/')
      .send({ processKey: PROCESS, businessKey: 'C-4711', variables: { caseId: 'C-4711' } });
    expect(res.status).toBe(201);
    const id = res.body.processInstanceId as string;
    expect(id).toBe(instanceId(PROCESS, 'C-4711'));

    // Cloud Tasks runs the hand-over: the counterpart gets the case, the token waits.
    await waitFor('the waiting point', async () => ((await waitingCount('C-4711')) === 1 ? true : undefined));
    await waitFor('the hand-over on the outbox topic', async () =>
      handedOver.some((m) => m.attributes.caseId === 'C-4711') ? true : undefined,
    );

    expect((await deliverCompletion('C-4711', 12)).kind).toBe('CORRELATED');
    await waitFor('COMPLETED', async () => ((await instanceStatus(id)) === 'COMPLETED' ? true : undefined));
    const settlements = await db.collection(SETTLEMENTS).where('caseId', '==', 'C-4711').get();
    expect(settlements.docs.map((d) => d.data())).toEqual([
      expect.objectContaining({ processInstanceId: id, completedItems: 12 }),
    ]);
    expect((await jobsOf(db, id)).map((j) => [j.activityId, j.status]).sort()).toEqual([
      ['handOver', 'DONE'],
      ['settle', 'DONE'],
    ]);
    // One document per instance: no token or job documents of their own any more.
    expect((await db.collection(COLLECTIONS.executions).where('processInstanceId', '==', id).get()).size).toBe(0);
    expect((await db.collection(COLLECTIONS.jobs).where('processInstanceId', '==', id).get()).size).toBe(0);
  });

  test('a second start answers 200 with the existing instance and no second token', async () => {
    const body = { processKey: PROCESS, businessKey: 'C-twice', variables: { caseId: 'C-twice' } };
    expect((await request(stack.startServer).post('/').send(body)).status).toBe(201);
    const again = await request(stack.startServer).post('/').send(body);
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ created: false, processInstanceId: instanceId(PROCESS, 'C-twice') });
    await waitFor('the waiting point', async () => ((await waitingCount('C-twice')) === 1 ? true : undefined));
    expect(await tokensOf(db, again.body.processInstanceId as string)).toHaveLength(1);
  });

  test.each([
    ['no processKey', { businessKey: 'x' }, 'processKey'],
    ['unknown process', { processKey: 'nope', businessKey: 'x' }, 'unknown processKey'],
    ['empty business key', { processKey: PROCESS, businessKey: '  ' }, 'businessKey'],
    ['variables not an object', { processKey: PROCESS, businessKey: 'x', variables: [1] }, 'variables'],
    [
      'a reserved variable name',
      { processKey: PROCESS, businessKey: 'x', variables: { __name__: 1 } },
      'Firestore does not allow',
    ],
  ])('startProcess with %s: 400 with the reason', async (_name, body, error) => {
    const res = await request(stack.startServer).post('/').send(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toContain(error);
  });

  test('a job re-run after a crash bills once: the settlement handler is idempotent', async () => {
    await request(stack.startServer)
      .post('/')
      .send({ processKey: PROCESS, businessKey: 'C-crash', variables: { caseId: 'C-crash' } });
    await waitFor('the waiting point', async () => ((await waitingCount('C-crash')) === 1 ? true : undefined));
    // Correlate without dispatching, then run the settlement handler as a worker would, and "crash" before finishing the job.
    const { result } = await runUnitOfWork(db, (uow) =>
      correlate(uow, stack.engine, {
        messageName: 'TaskCompleted',
        correlationKey: 'C-crash',
        variables: { completedItems: 3 },
        now: new Date(),
      }),
    );
    if (result.kind !== 'CORRELATED') throw new Error(result.kind);
    const job = result.jobs[0]!;
    const instance = result.transition.instance;
    await stack.handlers.settle!({ job, instance, now: new Date() });
    // The task is delivered (again): runJob runs the handler once more and finishes the job.
    await dispatchJobs(stack.queue, [job], log);
    await waitFor('COMPLETED', async () => ((await instanceStatus(instance.id)) === 'COMPLETED' ? true : undefined));
    const settlements = await db.collection(SETTLEMENTS).where('caseId', '==', 'C-crash').get();
    expect(settlements.size).toBe(1);
    expect((await jobOf(db, instance.id, job.id))?.status).toBe('DONE');
  });

  test('a job whose handler keeps failing ends FAILED with a JOB_FAILED incident, and Cloud Tasks stops', async () => {
    // The outbox topic does not exist (a Pub/Sub project of its own, no topics created): publishing fails on every run.
    const lonely = await startProcessStack(db, `${projectId}-lonely`, { maxAttempts: 2, createTopics: false });
    try {
      const res = await request(lonely.startServer)
        .post('/')
        .send({ processKey: PROCESS, businessKey: 'C-unreachable', variables: { caseId: 'C-unreachable' } });
      const id = res.body.processInstanceId as string;
      await waitFor('INCIDENT', async () => ((await instanceStatus(id)) === 'INCIDENT' ? true : undefined));
      await lonely.tasks.idle();
      const incidents = (await refs.instance(db, id).get()).get('incidents') as Array<{ reason: string }>;
      expect(incidents.map((i) => i.reason)).toEqual(['JOB_FAILED']);
      expect(await jobsOf(db, id)).toEqual([
        expect.objectContaining({ activityId: 'handOver', status: 'FAILED', attempts: 2 }),
      ]);
      // Two runs: a 503 (retry), then a 200 that ends the task.
      expect(lonely.tasks.dispatchLog.map((r) => r.status)).toEqual([503, 200]);
      expect(lonely.logs.some((l) => l.incident === 'JOB_FAILED' && l.severity === 'ERROR')).toBe(true);
    } finally {
      await lonely.stop();
    }
  });

  test('a double token: both instances INCIDENT / DUPLICATE_WAITING_POINT, and one ERROR line naming both', async () => {
    // Two cases started under different business keys for the same caseId: both tokens reach the wait for C-twin.
    const ids: string[] = [];
    for (const businessKey of ['C-twin-a', 'C-twin-b']) {
      const res = await request(stack.startServer)
        .post('/')
        .send({ processKey: PROCESS, businessKey, variables: { caseId: 'C-twin' } });
      ids.push(res.body.processInstanceId as string);
      // One after the other, so the second hand-over (in runJob) is the one that creates the duplicate.
      await waitFor(`the waiting point of ${businessKey}`, async () =>
        (await waitingCount('C-twin')) === ids.length ? true : undefined,
      );
    }
    for (const id of ids) {
      const snap = await refs.instance(db, id).get();
      expect(snap.get('status')).toBe('INCIDENT');
      expect((snap.get('incidents') as Array<{ reason: string }>).map((i) => i.reason)).toEqual([
        'DUPLICATE_WAITING_POINT',
      ]);
    }
    const errors = stack.logs.filter((l) => l.severity === 'ERROR' && l.correlationKey === 'C-twin');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ incident: 'DUPLICATE_WAITING_POINT', messageName: 'TaskCompleted', count: 2 });
    const named = (errors[0]!.executions as Array<{ processInstanceId: string }>)
      .map((e) => e.processInstanceId)
      .sort();
    expect(named).toEqual([...ids].sort());
  });

  test('the sweep dispatches a job whose task was never created (crash between commit and enqueue)', async () => {
    const started = await startProcessInstance(db, stack.engine, {
      processKey: PROCESS,
      businessKey: 'C-orphan',
      variables: { caseId: 'C-orphan' },
      now: new Date(),
    });
    expect(started.jobs).toHaveLength(1);
    // No dispatch: the process "crashed". Nothing moves until the sweep runs.
    expect(await sweepUndispatchedJobs(db, stack.queue, log, new Date())).toBe(0); // too young
    const swept = await sweepUndispatchedJobs(db, stack.queue, log, new Date(Date.now() + 120_000));
    expect(swept).toBeGreaterThanOrEqual(1);
    await waitFor('the waiting point', async () => ((await waitingCount('C-orphan')) === 1 ? true : undefined));
    expect((await jobOf(db, started.instance.id, started.jobs[0]!.id))?.status).toBe('DONE');
  });
});
