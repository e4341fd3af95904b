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
import type { Subscription } from '@google-cloud/pubsub';
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { defineApp, defineMessage, keyString, type StepHandler } from '../../functions/src/app';
import { loadAppEngine } from '../../functions/src/apps/app-engine';
import { registryOf } from '../../functions/src/apps/load-app';
import { readModelXml } from '../../functions/src/engine/deployed';
import type { Engine } from '../../functions/src/engine/engine';
import { refs } from '../../functions/src/engine/store/collections';
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

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures', 'bpmn-changes');
const TOPIC = 'changes-approved';
const HOUR = 3_600_000;

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
const Approved = z.object({ caseId: keyString(), eventId: keyString() });
/** The app as deployed with v1 (pay, fee) and with v2 (notify and review added with their tasks). */
const appWith = (steps: readonly string[]) =>
  defineApp({
    name: 'changes',
    messages: [
      defineMessage<z.infer<typeof Approved>>({
        name: 'Approved',
        topic: TOPIC,
        schema: Approved,
        correlationKey: (p) => p.caseId,
        dedupKey: (p) => p.eventId,
      }),
    ],
    steps: () => ({ ...Object.fromEntries(steps.map((s) => [s, step(s)])), fee }),
  });
const V1_APP = appWith(['pay']);
const V2_APP = appWith(['notify', 'review', 'pay']);

const firestore = freshFirestores();
const { db, projectId } = firestore.project('changing-a-process');
let folder: string;
let stack: ProcessStack;
let receiver: Server;
let push: Subscription;

/** A deploy: every model of `FIXTURES/version` copied over the folder's, loaded and checked with the app, their versions kept. */
async function deploy(version: 'v1' | 'v2', app: typeof V1_APP): Promise<Engine> {
  for (const file of await readdir(join(FIXTURES, version)))
    await copyFile(join(FIXTURES, version, file), join(folder, file));
  const engine = await loadAppEngine({ app, folder }, folder, stepIdsOf(app), inboxBuffer(HOUR));
  // Read now: deployedModelXml keeps a folder's first read, and this folder changes.
  const xml = await readModelXml(folder);
  await registerVersions(
    db,
    engine.processKeys.map((k) => engine.model(k)),
    async (k) => xml.get(k) ?? null,
    new Date(),
  );
  return engine;
}

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'changing-a-process-'));
  const v1 = await deploy('v1', V1_APP);
  // Today's handlers from the start: v1 never asks for notify or review, and the deploy swaps the models.
  stack = await startProcessStack(db, projectId, { app: { app: V2_APP, folder }, engine: v1 });
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
/** The steps whose jobs ran, in order. */
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
const start = (processKey: string, caseId: string, variables: Record<string, unknown> = {}): Promise<string> =>
  startOverHttp(stack, processKey, caseId, { caseId, ...variables });

/** Publishes Approved for `caseId` and relays until its document is DONE. */
async function approve(caseId: string): Promise<void> {
  await stack.pubsub
    .topic(TOPIC)
    .publishMessage({ json: { caseId, eventId: `approved-${caseId}` }, attributes: { eventType: 'Approved' } });
  await waitFor(`Approved for ${caseId}, DONE`, async () => {
    const doc = (await db.collection(INBOX).where('correlationKey', '==', caseId).get()).docs[0];
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

test('add a step, rename a wait, remove a branch, migrate: waiting instances go on along v1 (or v2, migrated), new ones along v2', async () => {
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
  const engine = await deploy('v2', V2_APP);
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
