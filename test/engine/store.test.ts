import type { Engine } from '../../functions/src/engine/engine';
import { instanceId } from '../../functions/src/engine/ids';
import { refs } from '../../functions/src/engine/store/collections';
import { correlate } from '../../functions/src/engine/store/correlate';
import { cancelTokenRun } from '../../functions/src/engine/store/cancel-token';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { STALE_JOB_ERROR } from '../../functions/src/engine/state';
import { moveToken } from '../../functions/src/engine/store/move-token';
import { recordJobFailure } from '../../functions/src/engine/store/record-job-failure';
import { RepairRefusedError } from '../../functions/src/engine/store/repair-request';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { runUnitOfWork } from '../../functions/src/engine/store/unit-of-work';
import { fixtureEngine } from '../support/engine';
import { freshFirestores } from '../support/firestore';
import { findJob, findToken, instanceWithoutJobs, tokensOf } from '../support/process-state';
import { eventSubscriptionCount, waitingPointsOf } from '../support/waiting';

let engine: Engine;
const db = freshFirestores()('engine-store');
const now = (): Date => new Date();
const PROCESS = 'fixture-process';

beforeAll(async () => {
  engine = await fixtureEngine();
});

/** Starts a case and runs its hand-over job, so its token waits for TaskCompleted. */
async function waitingCase(businessKey: string, caseId = businessKey) {
  const started = await startProcessInstance(db, engine, {
    processKey: PROCESS,
    businessKey,
    variables: { caseId },
    now: now(),
  });
  const handOver = started.jobs[0];
  if (handOver === undefined) throw new Error('no hand-over job');
  const done = await completeJobRun(db, engine, handOver, { handedOverMessageId: 'm' }, now());
  return { instance: started.instance, handOver, done };
}

const message = (correlationKey: string, variables: Record<string, unknown> = { completedItems: 4 }) => ({
  messageName: 'TaskCompleted',
  correlationKey,
  variables,
  now: now(),
});

describe('engine store on the Firestore emulator', () => {
  test('a second start answers with the existing instance and creates no second token', async () => {
    const first = await startProcessInstance(db, engine, {
      processKey: PROCESS,
      businessKey: 'C-dup',
      variables: { caseId: 'C-dup' },
      now: now(),
    });
    const second = await startProcessInstance(db, engine, {
      processKey: PROCESS,
      businessKey: 'C-dup',
      variables: { caseId: 'C-dup' },
      now: now(),
    });
    expect(first.created).toBe(true);
    expect(second.created).toBe(false);
    expect(second.jobs).toEqual([]);
    expect(second.instance.id).toBe(first.instance.id);
    expect(first.instance.id).toBe(instanceId(PROCESS, 'C-dup'));
    expect(await tokensOf(db, first.instance.id)).toHaveLength(1);
  });

  test('hand-over, correlation and settlement job: state moves in one transaction each', async () => {
    const { instance, done } = await waitingCase('C-path');
    expect(done.status).toBe('COMPLETED');
    const keyDoc = await refs.correlationKey(db, 'C-path').get();
    expect(keyDoc.get('waiting')).toHaveLength(1);
    expect(keyDoc.get('waiting')).toMatchObject([
      {
        messageName: 'TaskCompleted',
        correlationKey: 'C-path',
        activityId: 'waitForCompletion',
        processInstanceId: instance.id,
      },
    ]);
    // The key document is the only place the point is stored.
    expect(await eventSubscriptionCount(db)).toBe(0);

    const { result, stats } = await runUnitOfWork(db, (uow) => correlate(uow, engine, message('C-path')));
    expect(result.kind).toBe('CORRELATED');
    if (result.kind !== 'CORRELATED') return;
    expect(result.jobs.map((j) => j.activityId)).toEqual(['settle']);
    // Reads by id only: key document, instance (its tokens in it).
    expect(stats.reads).toBe(2);
    expect((await refs.correlationKey(db, 'C-path').get()).exists).toBe(false);
    expect(await waitingPointsOf(db, instance.id)).toEqual([]);
    expect(await eventSubscriptionCount(db)).toBe(0);
    expect((await refs.instance(db, instance.id).get()).get('variables')).toMatchObject({
      caseId: 'C-path',
      completedItems: 4,
    });

    const again = await runUnitOfWork(db, (uow) => correlate(uow, engine, message('C-path')));
    expect(again.result.kind).toBe('NO_WAITING_INSTANCE');

    const settlementJob = result.jobs[0]!;
    expect((await completeJobRun(db, engine, settlementJob, { settlementId: 'C-path' }, now())).status).toBe(
      'COMPLETED',
    );
    expect((await refs.instance(db, instance.id).get()).get('status')).toBe('COMPLETED');
    expect((await completeJobRun(db, engine, settlementJob, {}, now())).status).toBe('ALREADY_FINISHED');
  });

  test('no waiting point yet: NO_WAITING_INSTANCE, nothing written', async () => {
    const { result, stats } = await runUnitOfWork(db, (uow) => correlate(uow, engine, message('C-nobody')));
    expect(result).toEqual({ kind: 'NO_WAITING_INSTANCE' });
    expect(stats.writes).toBe(0);
  });

  test('double token across instances: both marked INCIDENT at once, and correlation is AMBIGUOUS with the count', async () => {
    const a = await waitingCase('C-twin-a', 'C-twin');
    expect(a.done.duplicates).toEqual([]);
    const b = await waitingCase('C-twin-b', 'C-twin');
    expect(b.done.duplicates).toHaveLength(1);
    expect(b.done.duplicates[0]).toMatchObject({ messageName: 'TaskCompleted', correlationKey: 'C-twin' });
    for (const id of [a.instance.id, b.instance.id]) {
      const snap = await refs.instance(db, id).get();
      expect(snap.get('status')).toBe('INCIDENT');
      expect(snap.get('incidents')).toEqual([expect.objectContaining({ reason: 'DUPLICATE_WAITING_POINT' })]);
    }
    // The second waiting point is recorded, not lost.
    expect((await refs.correlationKey(db, 'C-twin').get()).get('waiting')).toHaveLength(2);
    const { result } = await runUnitOfWork(db, (uow) => correlate(uow, engine, message('C-twin')));
    expect(result).toMatchObject({ kind: 'AMBIGUOUS', count: 2 });
  });

  test('repair: moving a token to a second waiting point is refused unless forced; cancelling removes it', async () => {
    const { instance } = await waitingCase('C-repair');
    await expect(
      moveToken(db, engine, {
        processInstanceId: instance.id,
        executionId: null,
        activityId: 'waitForCompletion',
        force: false,
        now: now(),
      }),
    ).rejects.toThrow(RepairRefusedError);
    expect((await refs.correlationKey(db, 'C-repair').get()).get('waiting')).toHaveLength(1);

    const forced = await moveToken(db, engine, {
      processInstanceId: instance.id,
      executionId: null,
      activityId: 'waitForCompletion',
      force: true,
      now: now(),
    });
    expect(forced.duplicates).toHaveLength(1);
    expect((await refs.instance(db, instance.id).get()).get('status')).toBe('INCIDENT');

    await cancelTokenRun(db, engine, instance.id, forced.executionId, now());
    const waiting = (await refs.correlationKey(db, 'C-repair').get()).get('waiting') as Array<{ executionId: string }>;
    expect(waiting.map((w) => w.executionId)).not.toContain(forced.executionId);
    expect(waiting).toHaveLength(1);
    const { result } = await runUnitOfWork(db, (uow) => correlate(uow, engine, message('C-repair')));
    expect(result.kind).toBe('CORRELATED');
  });

  test('a job whose token a repair moved away is ended by the repair (DONE, the stale-job lastError); its late completion moves nothing', async () => {
    const started = await startProcessInstance(db, engine, {
      processKey: PROCESS,
      businessKey: 'C-stale',
      variables: { caseId: 'C-stale' },
      now: now(),
    });
    const job = started.jobs[0]!;
    const { executionId } = job;
    // The operator skips the hand-over: the token now waits for the completion message.
    await moveToken(db, engine, {
      processInstanceId: started.instance.id,
      executionId,
      activityId: 'waitForCompletion',
      force: false,
      now: now(),
    });
    expect(await findJob(db, job.id)).toMatchObject({
      status: 'DONE',
      lastError: STALE_JOB_ERROR,
      finishedAt: expect.anything(),
    });
    const before = await instanceWithoutJobs(db, started.instance.id);

    const done = await completeJobRun(db, engine, job, { handedOverMessageId: 'late' }, now());
    expect(done).toMatchObject({ status: 'ALREADY_FINISHED', jobs: [] });
    expect(STALE_JOB_ERROR).toBe('token no longer waits for this job');
    // The late result is not merged and the token stays where the repair put it.
    expect(await instanceWithoutJobs(db, started.instance.id)).toEqual(before);
    expect(await findToken(db, executionId)).toMatchObject({
      status: 'WAITING_MESSAGE',
      activityId: 'waitForCompletion',
    });
  });

  test('a job that keeps failing is retried, then FAILED with a JOB_FAILED incident', async () => {
    const started = await startProcessInstance(db, engine, {
      processKey: PROCESS,
      businessKey: 'C-fail',
      variables: { caseId: 'C-fail' },
      now: now(),
    });
    const job = started.jobs[0]!;
    expect(await recordJobFailure(db, job, 'provider down', 3, now())).toEqual({ status: 'RETRY', attempts: 1 });
    expect(await recordJobFailure(db, job, 'provider down', 3, now())).toEqual({ status: 'RETRY', attempts: 2 });
    expect(await recordJobFailure(db, job, 'provider down', 3, now())).toEqual({ status: 'FAILED', attempts: 3 });
    expect(await findJob(db, job.id)).toMatchObject({ status: 'FAILED', attempts: 3, lastError: 'provider down' });
    const instance = await refs.instance(db, started.instance.id).get();
    expect(instance.get('status')).toBe('INCIDENT');
    expect(instance.get('incidents')).toEqual([
      expect.objectContaining({ reason: 'JOB_FAILED', activityId: 'handOver' }),
    ]);
    expect(await recordJobFailure(db, job, 'again', 3, now())).toEqual({ status: 'ALREADY_FINISHED', attempts: 3 });
  });

  test('competing correlations of one message: exactly one wins', async () => {
    await waitingCase('C-race');
    const outcomes = await Promise.all(
      Array.from({ length: 4 }, () =>
        runUnitOfWork(db, (uow) => correlate(uow, engine, message('C-race'))).then((r) => r.result.kind),
      ),
    );
    expect(outcomes.filter((k) => k === 'CORRELATED')).toHaveLength(1);
    expect(outcomes.filter((k) => k === 'NO_WAITING_INSTANCE')).toHaveLength(3);
  });
});
