import { join } from 'node:path';
import type { Engine } from '../../functions/src/engine/engine';
import { loadEngine } from '../../functions/src/engine/deployed';
import { refs } from '../../functions/src/engine/store/collections';
import { completeJobRun } from '../../functions/src/engine/store/complete-job';
import { startProcessInstance } from '../../functions/src/engine/store/start-instance';
import type { JobState } from '../../functions/src/engine/state';
import { freshFirestores } from '../support/firestore';

/**
 * An escalation through the Firestore store on the emulator
 * (test/fixtures/bpmn-escalation/repair.bpmn): a step inside a subprocess
 * ends, a throw event escalates, the non-interrupting boundary event on the
 * subprocess starts a heads-up beside the work, in the same transaction.
 */
const fresh = freshFirestores();
const { db } = fresh.project('escalations');
let engine: Engine;

beforeAll(async () => {
  engine = await loadEngine(
    join(__dirname, '..', 'fixtures', 'bpmn-escalation'),
    {},
    new Set(['diagnose', 'mend', 'tellCustomer']),
    null,
  );
});

const finish = async (job: JobState | undefined): Promise<readonly JobState[]> => {
  if (job === undefined) throw new Error('no job');
  const done = await completeJobRun(db, engine, job, {}, new Date());
  if (done.status !== 'COMPLETED') throw new Error(`job ${job.activityId}: ${done.status}`);
  return done.jobs;
};

test('the escalation starts the heads-up beside the work; both end, the instance completes', async () => {
  const s = await startProcessInstance(db, engine, {
    processKey: 'fixture-repair',
    businessKey: 'R-1',
    variables: {},
    now: new Date(),
  });
  const after = await finish(s.jobs[0]);
  expect(after.map((j) => j.activityId).sort()).toEqual(['mend', 'tellCustomer']);
  await finish(after.find((j) => j.activityId === 'tellCustomer'));
  expect((await refs.instance(db, s.instance.id).get()).get('status')).toBe('RUNNING');
  await finish(after.find((j) => j.activityId === 'mend'));
  expect((await refs.instance(db, s.instance.id).get()).get('status')).toBe('COMPLETED');
});
