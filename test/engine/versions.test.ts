/**
 * A process that changes while its instances wait (issue 40): each instance
 * runs on the version it started on, read from processVersions once and
 * then kept by the engine; new instances start on the newest. Through the
 * store on the emulator: v1 is `prepare → waitApproval (with a reminder
 * timer) → pay`, v2 renames the wait to waitDecision and adds audit before pay.
 */
import { Engine } from '../../functions/src/engine/engine';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';
import { completeJobCounted } from '../../functions/src/engine/store/complete-job';
import { fireTimerRun } from '../../functions/src/engine/store/fire-timer';
import { registerVersions } from '../../functions/src/engine/store/versions';
import type { InstanceState, JobState } from '../../functions/src/engine/state';
import { caseDriver, type LoadedVersion, loadVersion, STEPS, V1_FILE, V2_FILE } from '../support/case-versions';
import { freshFirestores } from '../support/firestore';
import { jobsOf } from '../support/process-state';

const fresh = freshFirestores();
const { db } = fresh.project('versions');
const other = fresh.project('versions-unstored').db;
const { start, approve, runJobs } = caseDriver(db);
let v1: LoadedVersion;
let v2: LoadedVersion;

const engineOf = async (v: LoadedVersion): Promise<Engine> => {
  await registerVersions(db, [v.model], async () => v.xml, new Date());
  return new Engine([v.model], {}, STEPS);
};
const instance = async (id: string): Promise<InstanceState> =>
  (await refs.instance(db, id).get()).data() as unknown as InstanceState;

beforeAll(async () => {
  v1 = await loadVersion(V1_FILE);
  v2 = await loadVersion(V2_FILE);
});

test('instances waiting at a wait, a job and a timer when v2 is deployed go on along v1; new ones along v2', async () => {
  const e1 = await engineOf(v1);
  // Waiting at the message wait.
  const atWait = await start(e1, 'C-wait');
  await runJobs(e1, atWait.jobs);
  // With its prepare job in flight.
  const inFlight = await start(e1, 'C-job');
  // At the wait, its reminder timer due.
  const withTimer = await start(e1, 'C-timer');
  await runJobs(e1, withTimer.jobs);
  expect((await instance(atWait.instance.id)).processVersion).toBe(v1.model.version);

  // v2 is deployed: this engine has never seen v1.
  const e2 = await engineOf(v2);
  expect(e2.at('case-handling', v1.model.version)).toBeNull();

  const approved = await approve(e2, 'C-wait', { approved: true });
  expect(approved.result.kind).toBe('CORRELATED');
  expect(await runJobs(e2, approved.result.kind === 'CORRELATED' ? approved.result.jobs : [])).toEqual(['pay']);
  expect((await instance(atWait.instance.id)).status).toBe('COMPLETED');
  // Read from processVersions once, then kept: the engine has it now.
  expect(e2.at('case-handling', v1.model.version)?.version).toBe(v1.model.version);

  expect(await runJobs(e2, inFlight.jobs)).toEqual(['prepare']);
  const afterPrepare = (await instance(inFlight.instance.id)).variables;
  expect(afterPrepare).toEqual({ caseId: 'C-job' });
  const timers = await db.collection(COLLECTIONS.timers).where('processInstanceId', '==', withTimer.instance.id).get();
  const fired = await fireTimerRun(db, e2, timers.docs[0]?.id ?? '', new Date(Date.now() + 2 * 3_600_000));
  expect(fired.status).toBe('FIRED');
  // v1's reminder: its job runs as v1 draws it.
  expect(await runJobs(e2, fired.jobs)).toEqual(['nudge']);
  for (const key of ['C-job', 'C-timer']) {
    const r = await approve(e2, key, { approved: true });
    expect(await runJobs(e2, r.result.kind === 'CORRELATED' ? r.result.jobs : [])).toEqual(['pay']);
  }

  // A new instance starts on v2 and takes its path.
  const fresh = await start(e2, 'C-new');
  expect(fresh.instance.processVersion).toBe(v2.model.version);
  await runJobs(e2, fresh.jobs);
  const r = await approve(e2, 'C-new', { approved: true });
  expect(await runJobs(e2, r.result.kind === 'CORRELATED' ? r.result.jobs : [])).toEqual(['audit', 'pay']);
  for (const id of [atWait.instance.id, inFlight.instance.id, withTimer.instance.id, fresh.instance.id])
    expect((await instance(id)).status).toBe('COMPLETED');
  // The job of v1's pay ran as v1 drew it; no instance of v1 has an audit job.
  expect((await jobsOf(db, atWait.instance.id)).map((j) => j.activityId)).not.toContain('audit');
});

test('an instance of a version that is not stored runs on the deployed model, as before, and the engine notes it', async () => {
  const unstored = caseDriver(other);
  const e1 = new Engine([v1.model], {}, STEPS);
  const s = await unstored.start(e1, 'C-unstored');
  await completeJobCounted(other, e1, s.jobs[0] as JobState, {}, new Date());
  const e2 = new Engine([v2.model], {}, STEPS);
  // v2 has no waitApproval: the step cannot be applied, as before versions were kept; the version is noted for the log.
  await expect(unstored.approve(e2, 'C-unstored')).rejects.toThrow(/has no node waitApproval/);
  expect(e2.takeUnstored()).toEqual([`case-handling@${v1.model.version}`]);
  expect(e2.takeUnstored()).toEqual([]);
});

test('a version is stored only with its own XML: a file that changed after the model was read is not stored under it', async () => {
  const { db: third } = fresh.project('versions-mismatch');
  // v2's model with v1's text (a cached or rewritten file): nothing stored, so no instance can run on the wrong drawing.
  expect(await registerVersions(third, [v2.model], async () => v1.xml, new Date())).toBe(0);
  expect((await third.collection(COLLECTIONS.processVersions).get()).size).toBe(0);
  expect(await registerVersions(third, [v2.model], async () => v2.xml, new Date())).toBe(1);
  const [stored] = (await third.collection(COLLECTIONS.processVersions).get()).docs;
  expect(stored?.get('version')).toBe(v2.model.version);
  // Stored already: a second function's start reads it and writes nothing.
  expect(await registerVersions(third, [v2.model], async () => v2.xml, new Date())).toBe(0);
});
