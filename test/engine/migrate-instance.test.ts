/**
 * engine/store/migrate-instance.ts on the emulator, with a parallel fork:
 * a job (handOver) and a user task (review) with a boundary timer
 * (test/fixtures/bpmn-review). The target renames the user task and draws
 * another boundary timer on it: the open task follows its token, the old
 * timer goes, the new one is set (and returned for its Cloud Task); once a
 * token waits at the join, migrating the instance is refused; the
 * migrated instance completes along the target.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProcessModel } from '../../functions/src/bpmn/model';
import { parseProcessModel } from '../../functions/src/bpmn/parse-model';
import { Engine } from '../../functions/src/engine/engine';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';
import { completeJobCounted } from '../../functions/src/engine/store/complete-job';
import { completeUserTaskRun } from '../../functions/src/engine/store/complete-user-task';
import { migrateInstance } from '../../functions/src/engine/store/migrate-instance';
import { RepairRefusedError } from '../../functions/src/engine/store/repair-request';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import { registerVersions } from '../../functions/src/engine/store/versions';
import type { InstanceState, JobState } from '../../functions/src/engine/state';
import { freshFirestores } from '../support/firestore';
import { tokensOf } from '../support/process-state';

const { db } = freshFirestores().project('migrate-instance');
const STEPS = new Set(['handOver', 'settle', 'escalate']);
let v1: ProcessModel;
let v2: ProcessModel;

beforeAll(async () => {
  const xml1 = await readFile(join(__dirname, '..', 'fixtures', 'bpmn-review', 'fixture-review.bpmn'), 'utf8');
  const xml2 = xml1
    .replace(/id="review" name="Review the case"/, 'id="check" name="Check the case"')
    .replace('attachedToRef="review"', 'attachedToRef="check"')
    .replace('id="reviewOverdue"', 'id="checkLate"')
    .replace('${reviewDeadline}', 'PT3H')
    .replace('sourceRef="fork" targetRef="review"', 'sourceRef="fork" targetRef="check"')
    .replace('sourceRef="review" targetRef="join"', 'sourceRef="check" targetRef="join"')
    .replace('sourceRef="reviewOverdue"', 'sourceRef="checkLate"');
  v1 = await parseProcessModel(xml1);
  v2 = await parseProcessModel(xml2);
  await registerVersions(db, [v1], async () => xml1, new Date());
  await registerVersions(db, [v2], async () => xml2, new Date());
});

const request = (
  id: string,
  from: ProcessModel,
  to: ProcessModel,
  mapping: Record<string, string>,
  requestId: string,
) => ({
  processInstanceId: id,
  processKey: 'fixture-review',
  from: from.version,
  to: to.version,
  mapping,
  now: new Date(),
  requestId,
});

test('a user task follows its token, its boundary timer is what the target draws, a join half reached is refused, and it completes along the target', async () => {
  const e1 = new Engine([v1], {}, STEPS);
  const e2 = new Engine([v2], {}, STEPS);
  const started = await startProcessInstance(db, e1, {
    processKey: 'fixture-review',
    businessKey: 'R-1',
    variables: {},
    now: new Date(),
  });
  const id = started.instance.id;
  const before = await tokensOf(db, id);
  const atReview = before.find((t) => t.activityId === 'review');
  expect(atReview?.status).toBe('WAITING_USER');
  const oldTimers = await db.collection(COLLECTIONS.timers).where('processInstanceId', '==', id).get();
  expect(oldTimers.docs.map((d) => d.get('activityId'))).toEqual(['reviewOverdue']);

  const done = await migrateInstance(db, e2, request(id, v1, v2, { review: 'check' }, 'm-1'));
  expect(done.alreadyApplied).toBe(false);
  expect(done.moves.map((m) => `${m.from}→${m.to}`).sort()).toEqual(['handOver→handOver', 'review→check']);
  expect(done.timers.map((t) => t.activityId)).toEqual(['checkLate']);

  const task = (await refs.userTask(db, atReview?.userTaskId ?? '').get()).data();
  expect(task).toMatchObject({ activityId: 'check', name: 'Check the case', status: 'OPEN', assignee: 'ana' });
  const timers = await db.collection(COLLECTIONS.timers).where('processInstanceId', '==', id).get();
  expect(timers.docs.map((d) => [d.get('activityId'), d.get('waitingAt')])).toEqual([['checkLate', 'check']]);
  const tokens = await tokensOf(db, id);
  expect(tokens.find((t) => t.id === atReview?.id)).toMatchObject({
    activityId: 'check',
    timerIds: [timers.docs[0]?.id],
  });
  expect(((await refs.instance(db, id).get()).data() as InstanceState).processVersion).toBe(v2.version);
  // The same request again (a re-run after a commit reported as failed): done, and its new timer still to dispatch.
  const again = await migrateInstance(db, e2, request(id, v1, v2, { review: 'check' }, 'm-1'));
  expect(again.alreadyApplied).toBe(true);
  expect(again.moves).toEqual(done.moves);
  expect(again.timers.map((t) => t.id)).toEqual(done.timers.map((t) => t.id));

  // The hand-over's job ends: its token waits at the join, half reached.
  const handOver = await completeJobCounted(db, e2, started.jobs[0] as JobState, {}, new Date());
  expect(handOver.result.status).toBe('COMPLETED');
  const back = migrateInstance(db, e1, request(id, v2, v1, { check: 'review' }, 'm-2'));
  await expect(back).rejects.toThrow(RepairRefusedError);
  await expect(back).rejects.toThrow(/waits at a join half reached/);

  const completed = await completeUserTaskRun(
    db,
    e2,
    { userTaskId: atReview?.userTaskId ?? '', variables: { ok: true }, by: 'ana', requestId: 'c-1' },
    new Date(),
  );
  expect(completed.kind).toBe('COMPLETED');
  const settle = completed.kind === 'COMPLETED' ? completed.jobs : [];
  expect(settle.map((j) => j.activityId)).toEqual(['settle']);
  await completeJobCounted(db, e2, settle[0] as JobState, {}, new Date());
  expect(((await refs.instance(db, id).get()).data() as InstanceState).status).toBe('COMPLETED');
});
