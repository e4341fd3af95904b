import { http } from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import type { Firestore } from '@google-cloud/firestore';
import request from 'supertest';
import type { Engine } from '../../functions/src/engine/engine';
import type { InstanceState } from '../../functions/src/engine/state';
import { COLLECTIONS, plain, refs } from '../../functions/src/engine/store/collections';
import { completeJobCounted, completeJobRun } from '../../functions/src/engine/store/complete-job';
import { STORED } from '../../functions/src/engine/store/converters';
import { correlate } from '../../functions/src/engine/store/correlate';
import { instanceJobs, instanceTokens } from '../../functions/src/engine/store/instance-doc';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { runUnitOfWork } from '../../functions/src/engine/store/unit-of-work';
import { sweepUndispatchedJobs } from '../../functions/src/jobs/sweep-jobs';
import { createRunJobHandler } from '../../functions/src/jobs/run-job';
import { createLogger } from '../../functions/src/log';
import type { EnqueueOptions, JobQueue } from '../../functions/src/tasks/job-queue';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { jobOf, jobsOf, tokensOf } from '../support/process-state';
import { NO_QUEUE } from '../support/queues';

/**
 * One document per instance (engine/store/instance-doc.ts): instances stored
 * the old way (executions/ and jobs/ documents) are read and folded in on
 * their next transition; old task bodies still run; the sweep finds PENDING
 * jobs in instance documents; and what a step reads and writes.
 */
let engine: Engine;
const db = freshFirestores()('instance-doc');
const PROCESS = 'fixture-process';
const log = createLogger(() => undefined);

beforeAll(async () => {
  engine = await fixtureEngine();
});

const start = (businessKey: string) =>
  startProcessInstance(db, engine, {
    processKey: PROCESS,
    businessKey,
    variables: { caseId: businessKey },
    now: new Date(),
  });
const message = (correlationKey: string) => ({
  messageName: 'TaskCompleted',
  correlationKey,
  variables: { completedItems: 3 },
  now: new Date(),
});
const exists = async (path: string): Promise<boolean> => (await db.doc(path).get()).exists;

/** Rewrites an instance the way the code before this version stored it: the instance alone, one document per token and per job. */
async function toOldLayout(store: Firestore, id: string): Promise<{ executions: string[]; jobs: string[] }> {
  const data = (await refs.instance(store, id).withConverter(STORED).get()).data() ?? {};
  const instance = Object.fromEntries(
    Object.entries(data).filter(([k]) => !['tokens', 'jobs', 'shard', 'jobsPendingSince', 'failedJobs'].includes(k)),
  ) as unknown as InstanceState;
  const batch = store.batch();
  batch.set(refs.instance(store, id), plain(instance));
  const executions = instanceTokens(data).map(
    (e) => (batch.set(refs.execution(store, e.id), plain(e)), refs.execution(store, e.id).path),
  );
  const jobs = instanceJobs(data).map((j) => (batch.set(refs.job(store, j.id), plain(j)), refs.job(store, j.id).path));
  await batch.commit();
  return { executions, jobs };
}

function recording(): JobQueue & { readonly calls: Array<{ id: string; options: EnqueueOptions | undefined }> } {
  const calls: Array<{ id: string; options: EnqueueOptions | undefined }> = [];
  return { calls, enqueue: async (id, options) => (calls.push({ id, options }), 'CREATED') };
}

describe('the old layout is read and folded in on the next transition', () => {
  test('a job of an old-layout instance completes; its token and job move into the instance, their documents are deleted', async () => {
    const started = await start('C-old-job');
    const old = await toOldLayout(db, started.instance.id);
    expect(old.executions).toHaveLength(1);
    expect(old.jobs).toHaveLength(1);
    const done = await completeJobRun(db, engine, started.jobs[0]!, { handedOverMessageId: 'm-old' }, new Date());
    expect(done.status).toBe('COMPLETED');
    expect(await tokensOf(db, started.instance.id)).toEqual([
      expect.objectContaining({ status: 'WAITING_MESSAGE', activityId: 'waitForCompletion' }),
    ]);
    expect(await jobsOf(db, started.instance.id)).toEqual([
      expect.objectContaining({ id: started.jobs[0]!.id, status: 'DONE' }),
    ]);
    for (const path of [...old.executions, ...old.jobs]) expect(await exists(path)).toBe(false);
  });

  test('a correlation into an old-layout instance finds its token in executions/ and folds it in', async () => {
    const started = await start('C-old-wait');
    await completeJobRun(db, engine, started.jobs[0]!, {}, new Date());
    const old = await toOldLayout(db, started.instance.id);
    const { result } = await runUnitOfWork(db, (uow) => correlate(uow, engine, message('C-old-wait')));
    expect(result.kind).toBe('CORRELATED');
    expect(await tokensOf(db, started.instance.id)).toEqual([
      expect.objectContaining({ status: 'WAITING_JOB', activityId: 'settle' }),
    ]);
    expect((await jobsOf(db, started.instance.id)).map((j) => j.activityId)).toEqual(['settle']);
    for (const path of old.executions) expect(await exists(path)).toBe(false);
  });

  test('a task body without processInstanceId (created before) still runs its job', async () => {
    const started = await start('C-old-task');
    await toOldLayout(db, started.instance.id);
    const job = started.jobs[0]!;
    http(
      'runJobOldBody',
      createRunJobHandler({
        db: () => db,
        engine: async () => engine,
        queue: () => NO_QUEUE,
        timerQueue: () => NO_QUEUE,
        handlers: () => ({ handOver: async () => ({}) }),
        verifier: null,
        log,
        now: () => new Date(),
        maxAttempts: 3,
        queueMaxAttempts: 5,
      }),
    );
    const res = await request(getTestServer('runJobOldBody')).post('/').send({ jobId: job.id });
    expect(res.body).toEqual({ outcome: 'completed', jobId: job.id });
    expect((await jobOf(db, started.instance.id, job.id))?.status).toBe('DONE');
    expect(await exists(refs.job(db, job.id).path)).toBe(false);
    // Delivered again (Cloud Tasks may): the job is found in the instance now, and answered as finished.
    const again = await request(getTestServer('runJobOldBody'))
      .post('/')
      .send({ jobId: job.id, processInstanceId: started.instance.id });
    expect(again.body).toMatchObject({ outcome: 'already finished', jobId: job.id });
  });
});

test('sweepJobs finds a PENDING job of the new layout whose task was lost, and dispatches it with its instance', async () => {
  const started = await start('C-lost-task');
  const queue = recording();
  expect(await sweepUndispatchedJobs(db, queue, log, new Date())).toBe(0);
  const swept = await sweepUndispatchedJobs(db, queue, log, new Date(Date.now() + 120_000));
  expect(swept).toBeGreaterThanOrEqual(1);
  expect(queue.calls).toContainEqual({ id: started.jobs[0]!.id, options: { processInstanceId: started.instance.id } });
  expect((await db.collection(COLLECTIONS.jobs).where('processInstanceId', '==', started.instance.id).get()).size).toBe(
    0,
  );
});

describe('what a step reads and writes (UnitOfWork stats; docs/data-model.md, Process state)', () => {
  // Before this version: hand-over 4 R / 6 W, correlation 3 R / 6 W, settlement job 3 R / 3 W (waiting points had documents of their own too).
  test('the hand-over job: the instance and the key document read; instance, key document (with the waiting point) and timer written', async () => {
    const started = await start('C-count-hand-over');
    const { result, stats } = await completeJobCounted(db, engine, started.jobs[0]!, {}, new Date());
    expect(result.status).toBe('COMPLETED');
    expect(stats).toEqual({ reads: 2, writes: 3 });
  });

  test('a correlation: key document and instance read; instance written, key document and timer deleted', async () => {
    const started = await start('C-count-correlation');
    await completeJobRun(db, engine, started.jobs[0]!, {}, new Date());
    const { result, stats } = await runUnitOfWork(db, (uow) => correlate(uow, engine, message('C-count-correlation')));
    expect(result.kind).toBe('CORRELATED');
    expect(stats).toEqual({ reads: 2, writes: 3 });
  });

  test('the settlement job: one read, one write', async () => {
    const started = await start('C-count-settlement');
    await completeJobRun(db, engine, started.jobs[0]!, {}, new Date());
    const { result } = await runUnitOfWork(db, (uow) => correlate(uow, engine, message('C-count-settlement')));
    if (result.kind !== 'CORRELATED') throw new Error(result.kind);
    const counted = await completeJobCounted(db, engine, result.jobs[0]!, {}, new Date());
    expect(counted.result.status).toBe('COMPLETED');
    expect(counted.stats).toEqual({ reads: 1, writes: 1 });
  });
});
