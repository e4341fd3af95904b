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
import type { Subscription } from '@google-cloud/pubsub';
import { emulatorClient } from '@inbox/cloud-tasks-emulator';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { defineApp, defineMessage, keyString, type StepHandler } from '../../functions/src/app';
import { loadAppEngine } from '../../functions/src/apps/app-engine';
import { registryOf } from '../../functions/src/apps/load-app';
import { readModelXml } from '../../functions/src/engine/deployed';
import type { Engine } from '../../functions/src/engine/engine';
import { COLLECTIONS, refs } from '../../functions/src/engine/store/collections';
import { STORED } from '../../functions/src/engine/store/converters';
import { registerVersions } from '../../functions/src/engine/store/versions';
import type { ExecutionState as Token, InstanceState } from '../../functions/src/engine/state';
import { INBOX } from '../../functions/src/inbox/document';
import { inboxBuffer } from '../../functions/src/relay/buffer';
import type { MigrationOutcome } from '../../functions/src/operations/migrate';
import { cliFor } from '../cli/run-cli';
import { REPO_ROOT, stepIdsOf } from '../support/app';
import { freshFirestores } from '../support/firestore';
import { relayOnStack, startOverHttp } from '../support/pipeline';
import { jobsOf } from '../support/process-state';
import { startProcessStack, type ProcessStack } from '../support/process-stack';
import { testReceiver } from '../support/receiver';
import { waitFor } from '../support/wait';
import { waitingPointsOf } from '../support/waiting';

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
const Approved = z.object({ caseId: keyString(), eventId: keyString() });
/** The app as deployed with v1 (no audit) and with v2 (audit added with its task). */
const appWith = (steps: readonly string[]) =>
  defineApp({
    name: 'versions',
    messages: [
      defineMessage<z.infer<typeof Approved>>({
        name: 'Approved',
        topic: TOPIC,
        schema: Approved,
        correlationKey: (p) => p.caseId,
        dedupKey: (p) => p.eventId,
      }),
    ],
    steps: () => Object.fromEntries(steps.map((s) => [s, step(s)])),
  });
const V1_APP = appWith(['prepare', 'nudge', 'pay']);
const V2_APP = appWith(['prepare', 'nudge', 'audit', 'pay']);

const firestore = freshFirestores();
const { db, projectId } = firestore.project('versions-e2e');
let folder: string;
let stack: ProcessStack;
let receiver: Server;
let push: Subscription;
let clockOffsetMs = 0;

/** What a deploy does: the folder's models loaded and checked with the app, and their versions kept. */
async function deploy(file: 'v1.bpmn' | 'v2.bpmn', app: typeof V1_APP): Promise<Engine> {
  await copyFile(join(FIXTURES, file), join(folder, 'case-handling.bpmn'));
  const engine = await loadAppEngine({ app, folder }, folder, stepIdsOf(app), inboxBuffer(HOUR));
  await registerVersions(
    db,
    engine.processKeys.map((k) => engine.model(k)),
    async (k) => (await readModelXml(folder)).get(k) ?? null,
    new Date(),
  );
  return engine;
}

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'versions-e2e-'));
  const v1 = await deploy('v1.bpmn', V1_APP);
  // The handlers of the newer app from the start: v1 never asks for audit, and the deploy swaps the models.
  stack = await startProcessStack(db, projectId, {
    app: { app: V2_APP, folder },
    engine: v1,
    now: () => new Date(Date.now() + clockOffsetMs),
  });
  receiver = testReceiver(db, { registry: registryOf(V2_APP) }).server;
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const address = receiver.address();
  if (address === null || typeof address === 'string') throw new Error('the receiver has no address');
  const [topic] = await stack.pubsub.createTopic(TOPIC);
  [push] = await topic.createSubscription(`${TOPIC}-push`, {
    pushConfig: { pushEndpoint: `http://127.0.0.1:${address.port}/` },
    ackDeadlineSeconds: 10,
    retryPolicy: { minimumBackoff: { seconds: 0 }, maximumBackoff: { seconds: 1 } },
  });
}, 60_000);

firestore.beforeTerminate(async () => {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- undefined after a beforeAll that failed before assigning it
  await push?.delete();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- as above
  if (receiver?.listening) await new Promise((resolve) => receiver.close(resolve));
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- as above
  await stack?.stop();
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- as above
  if (folder !== undefined) await rm(folder, { recursive: true, force: true });
});

const instanceOf = async (id: string): Promise<InstanceState> =>
  (await refs.instance(db, id).withConverter(STORED).get()).data() as unknown as InstanceState;
const ranSteps = async (id: string): Promise<string[]> =>
  (await jobsOf(db, id))
    .filter((j) => j.status === 'DONE')
    .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
    .map((j) => j.activityId);
/** Waits until the instance's token waits for its message at `wait`, its waiting point stored. */
const waitingAt = (id: string, caseId: string, wait: string): Promise<true> =>
  waitFor(`${caseId} waiting at ${wait}`, async () => {
    const tokens = Object.values(((await refs.instance(db, id).get()).get('tokens') ?? {}) as Record<string, Token>);
    return tokens.some((t) => t.status === 'WAITING_MESSAGE' && t.activityId === wait) &&
      (await waitingPointsOf(db, id, caseId)).length > 0
      ? true
      : undefined;
  });
const start = (caseId: string): Promise<string> => startOverHttp(stack, 'case-handling', caseId, { caseId });

/** Publishes Approved for `caseId` and relays until its document is DONE. */
async function approve(caseId: string): Promise<void> {
  await stack.pubsub
    .topic(TOPIC)
    .publishMessage({ json: { caseId, eventId: `approved-${caseId}` }, attributes: { eventType: 'Approved' } });
  await waitFor(`Approved for ${caseId}, DONE`, async () => {
    const docs = await db.collection(INBOX).where('correlationKey', '==', caseId).get();
    const doc = docs.docs[0];
    if (doc === undefined) return undefined;
    if (doc.get('status') === 'OPEN') await relayOnStack(db, stack);
    return (await doc.ref.get()).get('status') === 'DONE' ? true : undefined;
  });
}
const completed = (id: string): Promise<InstanceState> =>
  waitFor(`instance ${id} COMPLETED`, async () => {
    const instance = await instanceOf(id);
    return instance.status === 'COMPLETED' ? instance : undefined;
  });

test('instances at a wait, a job in flight and a timer when v2 is deployed complete along v1; new ones and a migrated group along v2', async () => {
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
    const v2engine = await deploy('v2.bpmn', V2_APP);
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
