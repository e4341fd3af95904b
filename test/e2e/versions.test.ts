/**
 * A process that changes while its instances wait, end to end on the
 * emulators (issue 40). The team edits its model file in place: v1 is
 * `prepare → waitApproval (a reminder timer on it) → pay`; v2 renames the
 * wait to waitDecision and adds `audit` before `pay`. Instances caught by the
 * deploy at a message wait, with a job in flight (its task held in a paused
 * queue) and at a timer go on along v1; new ones run along v2. Everything
 * runs through the real pieces: startProcess over HTTP, jobs and timers
 * through the Cloud Tasks emulator to runJob and fireTimer, the message
 * published to the Pub/Sub emulator and pushed to the receiver, the relay.
 * The deploy keeps the queues and their tasks, as Cloud Tasks does, and
 * loads the edited folder as a new function instance would.
 */
import { emulatorClient } from '@inbox/cloud-tasks-emulator';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { App, StepHandler } from '../../functions/src/app';
import { COLLECTIONS } from '../../functions/src/engine/store/collections';
import { INBOX } from '../../functions/src/inbox/document';
import type { MigrationOutcome } from '../../functions/src/operations/migrate';
import { cliFor } from '../cli/run-cli';
import { REPO_ROOT } from '../support/app';
import { approvalApp, type ApprovalStack, startApprovalStack } from '../support/approval-stack';
import { freshFirestores } from '../support/firestore';
import { waitFor } from '../support/wait';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'bpmn-versions');
const TOPIC = 'versions-approved';
const HOUR = 3_600_000;

/** Every handler call, `caseId activity`: each step's side effect. */
const calls: string[] = [];
const step =
  (name: string): StepHandler =>
  async ({ instance }) => {
    calls.push(`${String(instance.variables.caseId)} ${name}`);
    return {};
  };
/** The app as deployed with v1 (no audit) and with v2 (audit added with its task). */
const appWith = (steps: readonly string[]): App =>
  approvalApp('versions', TOPIC, Object.fromEntries(steps.map((s) => [s, step(s)])));
const V1_APP = appWith(['prepare', 'nudge', 'pay']);
const V2_APP = appWith(['prepare', 'nudge', 'audit', 'pay']);
/** The model file edited in place: the team's one case-handling.bpmn. */
const edit =
  (file: 'v1.bpmn' | 'v2.bpmn') =>
  (folder: string): Promise<void> =>
    copyFile(join(FIXTURES, file), join(folder, 'case-handling.bpmn'));

const firestore = freshFirestores();
const { db, projectId } = firestore.project('versions-e2e');
let s: ApprovalStack;
let clockOffsetMs = 0;

beforeAll(async () => {
  // The handlers of the newer app from the start: v1 never asks for audit, and the deploy swaps the models.
  s = await startApprovalStack(db, projectId, {
    topic: TOPIC,
    first: edit('v1.bpmn'),
    firstApp: V1_APP,
    app: V2_APP,
    now: () => new Date(Date.now() + clockOffsetMs),
  });
}, 60_000);

firestore.beforeTerminate(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await s?.stop();
});

test('instances at a wait, a job in flight and a timer when v2 is deployed complete along v1; new ones and a migrated group along v2', async () => {
  const { stack, waitingAt, ranSteps, approve, completed, instanceOf } = s;
  const start = (caseId: string): Promise<string> => s.start('case-handling', caseId);
  const v1 = stack.engine.model('case-handling').version;
  // At the wait: prepare ran, the token waits for Approved.
  const atWait = await start('C-wait');
  await waitingAt(atWait, 'C-wait', 'waitApproval');
  // At the timer: waiting too; its reminder fires after the deploy.
  const atTimer = await start('C-timer');
  await waitingAt(atTimer, 'C-timer', 'waitApproval');
  // A group the operator will move onto v2.
  const group = [await start('C-mig-1'), await start('C-mig-2')];
  for (const [i, id] of group.entries()) await waitingAt(id, `C-mig-${i + 1}`, 'waitApproval');
  // A job in flight: its prepare task sits in the paused queue across the deploy.
  const admin = emulatorClient(stack.tasks.host);
  const jobsQueue = stack.jobsQueueName;
  try {
    await admin.pauseQueue({ name: jobsQueue });
    const inFlight = await start('C-job');
    await waitFor('the prepare task of C-job held', async () =>
      stack.tasks.tasks(jobsQueue).length > 0 ? true : undefined,
    );

    // The deploy: the file edited in place, v2 loaded, checked and kept.
    const v2engine = await s.deploy(edit('v2.bpmn'), V2_APP);
    stack.redeploy(v2engine);
    const v2 = v2engine.model('case-handling').version;
    expect(v2).not.toBe(v1);
    expect(v2engine.at('case-handling', v1)).toBeNull();
    await admin.resumeQueue({ name: jobsQueue });
    await waitingAt(inFlight, 'C-job', 'waitApproval');

    // The reminder of C-timer is due an hour on: fireTimer's clock moves, Cloud Tasks runs the task now.
    const [timer] = (await db.collection(COLLECTIONS.timers).where('processInstanceId', '==', atTimer).get()).docs;
    expect(timer).toBeDefined();
    clockOffsetMs = 2 * HOUR;
    const timerTask = stack.tasks.tasks(stack.timersQueueName).find((t) => t.name.endsWith(timer?.id ?? '-'));
    expect(timerTask).toBeDefined();
    await admin.runTask({ name: timerTask?.name ?? '' });
    await waitFor('the nudge of C-timer', async () => ((await ranSteps(atTimer)).includes('nudge') ? true : undefined));
    clockOffsetMs = 0;

    // The group moves to v2 at the renamed wait: previewed, then held to the preview.
    const migrate = (...args: string[]) =>
      cliFor(projectId)(
        '--json',
        'migrate',
        '--process',
        'case-handling',
        '--from',
        v1,
        '--to',
        v2,
        '--map',
        'waitApproval=waitDecision',
        '--instances',
        group.join(','),
        ...args,
      );
    const dry = await migrate('--dry-run');
    expect(dry.err).toBe('');
    const preview = dry.json() as MigrationOutcome;
    expect(preview.instances.map((i) => i.verdict)).toEqual(['WOULD_MIGRATE', 'WOULD_MIGRATE']);
    expect((await instanceOf(group[0] ?? '')).processVersion).toBe(v1);
    const run = await migrate('--expect', preview.expect ?? '');
    expect(run.code).toBe(0);
    expect((run.json() as MigrationOutcome).instances.map((i) => i.verdict)).toEqual(['MIGRATED', 'MIGRATED']);
    for (const [i, id] of group.entries()) await waitingAt(id, `C-mig-${i + 1}`, 'waitDecision');

    // A new instance starts on v2.
    const fresh = await start('C-new');
    await waitingAt(fresh, 'C-new', 'waitDecision');

    for (const caseId of ['C-wait', 'C-job', 'C-timer', 'C-new', 'C-mig-1', 'C-mig-2']) await approve(caseId);
    const ended = await Promise.all([atWait, inFlight, atTimer, fresh, ...group].map(completed));
    expect(ended.map((i) => i.processVersion)).toEqual([v1, v1, v1, v2, v2, v2]);
    expect(ended.map((i) => i.incidents)).toEqual([[], [], [], [], [], []]);
    expect(await ranSteps(atWait)).toEqual(['prepare', 'pay']);
    expect(await ranSteps(inFlight)).toEqual(['prepare', 'pay']);
    // nudge's job bears fireTimer's clock, two hours on: compared as a set.
    expect((await ranSteps(atTimer)).sort()).toEqual(['nudge', 'pay', 'prepare']);
    expect(await ranSteps(fresh)).toEqual(['prepare', 'audit', 'pay']);
    // The migrated group from the mapped wait on: v2's audit, then pay.
    for (const id of group) expect(await ranSteps(id)).toEqual(['prepare', 'audit', 'pay']);
  } finally {
    await admin.close();
  }

  // Each step's side effect once; nothing parked, nothing left open, no ERROR line.
  expect([...calls].sort()).toEqual(
    [
      'C-job pay',
      'C-job prepare',
      'C-mig-1 audit',
      'C-mig-1 pay',
      'C-mig-1 prepare',
      'C-mig-2 audit',
      'C-mig-2 pay',
      'C-mig-2 prepare',
      'C-new audit',
      'C-new pay',
      'C-new prepare',
      'C-timer nudge',
      'C-timer pay',
      'C-timer prepare',
      'C-wait pay',
      'C-wait prepare',
    ].sort(),
  );
  const inbox = await db.collection(INBOX).get();
  expect(inbox.docs.map((d) => d.get('status'))).toEqual(Array(6).fill('DONE'));
  expect(stack.logs.filter((l) => l.severity === 'ERROR')).toEqual([]);
}, 120_000);
