import { join } from 'node:path';
import type { Engine } from '../../functions/src/engine/engine';
import { loadEngine } from '../../functions/src/engine/deployed';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';
import { completeJobCounted, completeJobRun } from '../../functions/src/engine/store/complete-job';
import { completeUserTaskCounted, completeUserTaskRun } from '../../functions/src/engine/store/complete-user-task';
import { fireTimerRun } from '../../functions/src/engine/store/fire-timer';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import type { JobState, UserTaskState } from '../../functions/src/engine/state';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import { freshFirestores } from '../support/firestore';
import { openUserTaskOf, tokensOf } from '../support/process-state';

/**
 * Parallel gateways, user tasks and a terminate end event through the
 * Firestore store on the emulator (test/fixtures/bpmn-review/fixture-review.bpmn):
 * a hand-over job and a person's review side by side, a join, then the
 * settlement; an overdue review escalates and terminates. Each step is one
 * transaction; the counts of reads and writes are what docs/cost.md quotes.
 */
const BPMN_DIR = join(__dirname, '..', 'fixtures', 'bpmn-review');
const DAY = 86_400_000;
const fresh = freshFirestores();
const { db } = fresh.project('parallel-user-tasks');
let engine: Engine;

beforeAll(async () => {
  engine = await loadEngine(BPMN_DIR, {}, new Set(['handOver', 'settle', 'escalate']), inboxBuffer(7 * DAY));
});

async function started(key: string, now = new Date()) {
  const s = await startProcessInstance(db, engine, {
    processKey: 'fixture-review',
    businessKey: key,
    variables: { caseId: key },
    now,
  });
  return s;
}
const openTaskOf = (instanceId: string): Promise<UserTaskState> => openUserTaskOf(db, instanceId);
const statusOf = async (id: string) => (await refs.instance(db, id).get()).get('status') as string;

describe('a fork, a user task and a join on the emulator', () => {
  test('the join goes on only after the job and the person; the task is COMPLETED by whom, once', async () => {
    const s = await started('R-1');
    const id = s.instance.id;
    expect(s.jobs.map((j) => j.activityId)).toEqual(['handOver']);
    const task = await openTaskOf(id);
    expect(task).toMatchObject({
      activityId: 'review',
      name: 'Review the case',
      assignee: 'ana',
      candidateGroups: ['reviewers', 'leads'],
      formKey: 'forms/review',
      businessKey: 'R-1',
    });
    expect(
      (await tokensOf(db, id))
        .filter((t) => t.status !== 'ENDED')
        .map((t) => t.status)
        .sort(),
    ).toEqual(['WAITING_JOB', 'WAITING_USER']);

    const first = await completeJobRun(db, engine, s.jobs[0] as JobState, {}, new Date());
    expect(first.status).toBe('COMPLETED');
    expect(first.jobs).toEqual([]); // the join still waits for the review
    expect(await statusOf(id)).toBe('RUNNING');

    const request = { userTaskId: task.id, variables: { approved: true }, by: 'ana@example.com', requestId: 'req-1' };
    const done = await completeUserTaskRun(db, engine, request, new Date());
    expect(done.kind).toBe('COMPLETED');
    if (done.kind !== 'COMPLETED') return;
    expect(done.jobs.map((j) => j.activityId)).toEqual(['settle']);
    expect(done.task).toMatchObject({
      status: 'COMPLETED',
      completedBy: 'ana@example.com',
      completionRequestId: 'req-1',
    });

    // The same request again: nothing changes; another request: refused, saying who did it.
    expect((await completeUserTaskRun(db, engine, request, new Date())).kind).toBe('ALREADY_COMPLETED');
    const other = await completeUserTaskRun(db, engine, { ...request, requestId: 'req-2' }, new Date());
    expect(other).toMatchObject({
      kind: 'REFUSED',
      reason: expect.stringMatching(/^already completed by ana@example.com at /),
    });

    await completeJobRun(db, engine, done.jobs[0] as JobState, {}, new Date());
    expect(await statusOf(id)).toBe('COMPLETED');
    const instance = (await refs.instance(db, id).get()).data();
    expect(instance?.variables).toMatchObject({ approved: true, caseId: 'R-1' });
    expect(instance?.incidents).toEqual([]);
  });

  test('an overdue review escalates and the terminate end event ends the hand-over token and its job', async () => {
    const t0 = new Date(Date.now() - 3 * DAY);
    const s = await started('R-2', t0);
    const id = s.instance.id;
    const task = await openTaskOf(id);
    const timer = (await db.collection(COLLECTIONS.timers).where('processInstanceId', '==', id).get()).docs[0];
    const fired = await fireTimerRun(db, engine, timer?.id ?? '', new Date());
    expect(fired.status).toBe('FIRED');
    expect(fired.jobs.map((j) => j.activityId)).toEqual(['escalate']);
    const cancelled = (await refs.userTask(db, task.id).get()).data();
    expect(cancelled).toMatchObject({ status: 'CANCELLED', cancelReason: 'boundary timer reviewOverdue fired' });
    expect(cancelled?.expireAt).toBeDefined();

    // A person who completes it now is told why not.
    const late = await completeUserTaskRun(
      db,
      engine,
      { userTaskId: task.id, variables: {}, by: 'ana@example.com', requestId: 'late' },
      new Date(),
    );
    expect(late).toMatchObject({ kind: 'REFUSED', reason: 'cancelled: boundary timer reviewOverdue fired' });

    const escalated = await completeJobRun(db, engine, fired.jobs[0] as JobState, {}, new Date());
    expect(escalated.status).toBe('COMPLETED');
    expect(await statusOf(id)).toBe('COMPLETED');
    const tokens = await tokensOf(db, id);
    expect(tokens.find((t) => t.activityId === 'handOver')?.status).toBe('CANCELLED');
    // The hand-over job, still PENDING when the instance terminated, ended stale: it will never move anything.
    const handOver = await completeJobRun(db, engine, s.jobs[0] as JobState, {}, new Date());
    expect(handOver.status).toBe('ALREADY_FINISHED');
  });

  test('a completion of an unknown task is NOT_FOUND', async () => {
    expect(
      (
        await completeUserTaskRun(
          db,
          engine,
          { userTaskId: 'nope', variables: {}, by: 'x', requestId: 'r' },
          new Date(),
        )
      ).kind,
    ).toBe('NOT_FOUND');
  });

  test('what a fork, a join and a completion cost in reads and writes (docs/cost.md)', async () => {
    const s = await started('R-cost');
    const job = await completeJobCounted(db, engine, s.jobs[0] as JobState, {}, new Date());
    const task = await openTaskOf(s.instance.id);
    const completion = await completeUserTaskCounted(
      db,
      engine,
      { userTaskId: task.id, variables: {}, by: 'x', requestId: 'cost' },
      new Date(),
    );
    // The job's arrival at the join: the instance document (tokens and jobs in it), written once.
    expect(job.stats).toMatchObject({ reads: 1, writes: 1 });
    // The person's completion that fires the join: the task and the instance read; the task and the instance
    // written, and the review's deadline timer deleted.
    expect(completion.stats).toMatchObject({ reads: 2, writes: 3 });
  });
});
