/**
 * The worked examples of docs/your-own-process.md, "Changing a process that
 * is running", end to end on the emulators: four small processes
 * (test/fixtures/bpmn-changes/v1, then v2, edited in place in one models
 * folder) with instances waiting when v2 is deployed. (a) add-step: notify
 * added after the wait; (b) rename-wait: waitApproval renamed waitDecision;
 * (c) remove-branch: the rush branch (waitRush, rushFee) removed, its fee a
 * task of type `fee` that standardFee shares; (d) migrate-case: waiting
 * instances moved to v2 with `inbox migrate`. The real pieces run as in
 * test/e2e/versions.test.ts: startProcess over HTTP, jobs through the Cloud
 * Tasks emulator to runJob, Approved published to the Pub/Sub emulator and
 * pushed to the receiver, the relay.
 */
import { copyFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { App, StepHandler } from '../../functions/src/app';
import { INBOX } from '../../functions/src/inbox/document';
import type { MigrationOutcome } from '../../functions/src/operations/migrate';
import { cliFor } from '../cli/run-cli';
import { REPO_ROOT } from '../support/app';
import { approvalApp, type ApprovalStack, startApprovalStack } from '../support/approval-stack';
import { freshFirestores } from '../support/firestore';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'bpmn-changes');
const TOPIC = 'changes-approved';

/** Every handler call, `caseId step` (`caseId fee activity tier` for the fee): each step's side effect. */
const calls: string[] = [];
const step =
  (name: string): StepHandler =>
  async ({ instance }) => {
    calls.push(`${String(instance.variables.caseId)} ${name}`);
    return {};
  };
/** One handler for every task of type fee, in every version: it reads the task's headers of the instance's version. */
const fee: StepHandler = async ({ instance, job, headers }) => {
  calls.push(`${String(instance.variables.caseId)} fee ${job.activityId} ${String(headers?.tier)}`);
  return {};
};
/** The app as deployed with v1 (pay, fee) and with v2 (notify and review added with their tasks). */
const appWith = (steps: readonly string[]): App =>
  approvalApp('changes', TOPIC, { ...Object.fromEntries(steps.map((s) => [s, step(s)])), fee });
const V1_APP = appWith(['pay']);
const V2_APP = appWith(['notify', 'review', 'pay']);
/** Every model of `FIXTURES/version` copied over the folder's: the files edited in place. */
const edit =
  (version: 'v1' | 'v2') =>
  async (folder: string): Promise<void> => {
    for (const file of await readdir(join(FIXTURES, version)))
      await copyFile(join(FIXTURES, version, file), join(folder, file));
  };

const firestore = freshFirestores();
const { db, projectId } = firestore.project('changing-a-process');
let s: ApprovalStack;

beforeAll(async () => {
  // Today's handlers from the start: v1 never asks for notify or review, and the deploy swaps the models.
  s = await startApprovalStack(db, projectId, { topic: TOPIC, first: edit('v1'), firstApp: V1_APP, app: V2_APP });
}, 60_000);

firestore.beforeTerminate(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await s?.stop();
});

test('add a step, rename a wait, remove a branch, migrate: waiting instances go on along v1 (or v2, migrated), new ones along v2', async () => {
  const { stack, start, waitingAt, ranSteps, approve, completed, instanceOf } = s;
  const v1 = (key: string): string => stack.engine.model(key).version;
  const before = Object.fromEntries(
    ['add-step', 'rename-wait', 'remove-branch', 'migrate-case'].map((k) => [k, v1(k)]),
  );

  // Waiting when v2 is deployed: one of each, the rush case on the branch v2 removes, two cases to migrate.
  const addWaiting = await start('add-step', 'A-wait');
  const renameWaiting = await start('rename-wait', 'R-wait');
  const rushWaiting = await start('remove-branch', 'B-rush', { rush: true });
  const group = [await start('migrate-case', 'M-1'), await start('migrate-case', 'M-2')];
  await waitingAt(addWaiting, 'A-wait', 'waitApproval');
  await waitingAt(renameWaiting, 'R-wait', 'waitApproval');
  await waitingAt(rushWaiting, 'B-rush', 'waitRush');
  for (const [i, id] of group.entries()) await waitingAt(id, `M-${i + 1}`, 'waitApproval');

  // The deploy: the four files edited in place, v2 loaded, checked and kept.
  const engine = await s.deploy(edit('v2'), V2_APP);
  stack.redeploy(engine);
  const after = (key: string): string => engine.model(key).version;
  for (const key of Object.keys(before)) expect(after(key)).not.toBe(before[key]);

  // New instances start on v2: the renamed wait; the removed branch is not taken, rush or not.
  const addNew = await start('add-step', 'A-new');
  const renameNew = await start('rename-wait', 'R-new');
  const rushNew = await start('remove-branch', 'B-new', { rush: true });
  await waitingAt(addNew, 'A-new', 'waitApproval');
  await waitingAt(renameNew, 'R-new', 'waitDecision');
  // The instance waiting at the renamed wait still waits there, on v1.
  await waitingAt(renameWaiting, 'R-wait', 'waitApproval');

  // (d) The migrate-case group onto v2: previewed, then held to the preview.
  const migrate = (...args: string[]) =>
    cliFor(projectId)(
      '--json',
      'migrate',
      '--process',
      'migrate-case',
      '--from',
      before['migrate-case'] ?? '',
      '--to',
      after('migrate-case'),
      '--map',
      'waitApproval=waitDecision',
      '--all',
      ...args,
    );
  const preview = await migrate('--dry-run');
  expect([preview.code, preview.err]).toEqual([0, '']);
  const planned = preview.json() as MigrationOutcome;
  expect(planned.instances.map((i) => [i.instanceId, i.verdict]).sort()).toEqual(
    group.map((id) => [id, 'WOULD_MIGRATE']).sort(),
  );
  // The dry run changed nothing.
  for (const [i, id] of group.entries()) await waitingAt(id, `M-${i + 1}`, 'waitApproval');
  expect((await instanceOf(group[0] ?? '')).processVersion).toBe(before['migrate-case']);
  const run = await migrate('--expect', planned.expect ?? '');
  expect(run.code).toBe(0);
  expect((run.json() as MigrationOutcome).instances.map((i) => i.verdict)).toEqual(['MIGRATED', 'MIGRATED']);
  for (const [i, id] of group.entries()) await waitingAt(id, `M-${i + 1}`, 'waitDecision');

  for (const caseId of ['A-wait', 'A-new', 'R-wait', 'R-new', 'B-rush', 'M-1', 'M-2']) await approve(caseId);
  const [aWait, aNew, rWait, rNew, bRush, bNew, m1, m2] = await Promise.all(
    [addWaiting, addNew, renameWaiting, renameNew, rushWaiting, rushNew, ...group].map(completed),
  );

  // (a) The waiting instance goes on without notify; the new one runs it.
  expect([aWait?.processVersion, aNew?.processVersion]).toEqual([before['add-step'], after('add-step')]);
  expect(await ranSteps(addWaiting)).toEqual(['pay']);
  expect(await ranSteps(addNew)).toEqual(['notify', 'pay']);
  // (b) The waiting instance took its message at waitApproval, on v1; the new one at waitDecision.
  expect([rWait?.processVersion, rNew?.processVersion]).toEqual([before['rename-wait'], after('rename-wait')]);
  expect(await ranSteps(renameWaiting)).toEqual(['pay']);
  expect(await ranSteps(renameNew)).toEqual(['pay']);
  // (c) The rush case finishes its removed branch, rushFee with v1's headers; the new rush case cannot take it.
  expect([bRush?.processVersion, bNew?.processVersion]).toEqual([before['remove-branch'], after('remove-branch')]);
  expect(await ranSteps(rushWaiting)).toEqual(['rushFee', 'pay']);
  expect(await ranSteps(rushNew)).toEqual(['standardFee', 'pay']);
  // (d) The migrated group ran v2's review from the mapped wait on.
  expect([m1?.processVersion, m2?.processVersion]).toEqual([after('migrate-case'), after('migrate-case')]);
  for (const id of group) expect(await ranSteps(id)).toEqual(['review', 'pay']);

  // Each step's side effect once; no incident, nothing parked or left open, no ERROR line.
  expect([...calls].sort()).toEqual(
    [
      'A-wait pay',
      'A-new notify',
      'A-new pay',
      'R-wait pay',
      'R-new pay',
      'B-rush fee rushFee rush',
      'B-rush pay',
      'B-new fee standardFee standard',
      'B-new pay',
      'M-1 review',
      'M-1 pay',
      'M-2 review',
      'M-2 pay',
    ].sort(),
  );
  expect([aWait, aNew, rWait, rNew, bRush, bNew, m1, m2].map((i) => i?.incidents)).toEqual(Array(8).fill([]));
  const inbox = await db.collection(INBOX).get();
  expect(inbox.docs.map((d) => d.get('status'))).toEqual(Array(7).fill('DONE'));
  expect(stack.logs.filter((l) => l.severity === 'ERROR')).toEqual([]);
}, 120_000);
