/**
 * A process stack for tests that change a running process: an app whose
 * processes wait for `Approved` (correlated on `caseId`), published to the
 * Pub/Sub emulator and pushed to a receiver, relayed by relayOnStack; its
 * models in a folder of their own that a test edits in place and deploys
 * again (deploy(), then stack.redeploy()), as a team edits its model files.
 * Used by test/e2e/versions.test.ts and test/e2e/changing-a-process.test.ts.
 */
import type { Firestore } from '@google-cloud/firestore';
import type { Subscription } from '@google-cloud/pubsub';
import { mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { type App, defineApp, defineMessage, keyString, type StepHandler } from '../../functions/src/app';
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
import { stepIdsOf } from './app';
import { relayOnStack, startOverHttp } from './pipeline';
import { jobsOf } from './process-state';
import { startProcessStack, type ProcessStack, type ProcessStackOptions } from './process-stack';
import { testReceiver } from './receiver';
import { waitFor } from './wait';
import { waitingPointsOf } from './waiting';

const HOUR = 3_600_000;
const Approved = z.object({ caseId: keyString(), eventId: keyString() });

/** An app named `name` whose one message is `Approved` on `topic`, with `steps`. */
export function approvalApp(name: string, topic: string, steps: Readonly<Record<string, StepHandler>>): App {
  return defineApp({
    name,
    messages: [
      defineMessage<z.infer<typeof Approved>>({
        name: 'Approved',
        topic,
        schema: Approved,
        correlationKey: (p) => p.caseId,
        dedupKey: (p) => p.eventId,
      }),
    ],
    steps: () => steps,
  });
}

export interface ApprovalStack {
  readonly stack: ProcessStack;
  /** The folder the models are deployed from. */
  readonly folder: string;
  /**
   * A deploy: `edit` changes the folder's files, then they are loaded and
   * checked with `app` and their versions kept, as a function's start does.
   * The caller hands the engine to stack.redeploy() (the first is the stack's).
   */
  readonly deploy: (edit: (folder: string) => Promise<void>, app: App) => Promise<Engine>;
  readonly instanceOf: (id: string) => Promise<InstanceState>;
  /** The activities whose jobs ran to DONE, by creation time. */
  readonly ranSteps: (id: string) => Promise<string[]>;
  /** Waits until the instance's token waits for its message at `wait`, its waiting point stored. */
  readonly waitingAt: (id: string, caseId: string, wait: string) => Promise<true>;
  /** Waits until the instance is COMPLETED. */
  readonly completed: (id: string) => Promise<InstanceState>;
  readonly start: (
    processKey: string,
    caseId: string,
    variables?: Readonly<Record<string, unknown>>,
  ) => Promise<string>;
  /** Publishes Approved for `caseId` and relays until its document is DONE. */
  readonly approve: (caseId: string) => Promise<void>;
  readonly stop: () => Promise<void>;
}

/**
 * Deploys the first models (`first` fills the folder, checked with
 * `firstApp`), then starts the stack with `app`'s handlers (today's, a
 * superset of the first's) and the receiver for `topic`.
 */
export async function startApprovalStack(
  db: Firestore,
  projectId: string,
  options: {
    readonly topic: string;
    readonly first: (folder: string) => Promise<void>;
    readonly firstApp: App;
    readonly app: App;
    readonly now?: ProcessStackOptions['now'];
  },
): Promise<ApprovalStack> {
  const folder = await mkdtemp(join(tmpdir(), 'approval-stack-'));
  const deploy = async (edit: (folder: string) => Promise<void>, app: App): Promise<Engine> => {
    await edit(folder);
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
  };
  const first = await deploy(options.first, options.firstApp);
  const stack = await startProcessStack(db, projectId, {
    app: { app: options.app, folder },
    engine: first,
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  const receiver: Server = testReceiver(db, { registry: registryOf(options.app) }).server;
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const address = receiver.address();
  if (address === null || typeof address === 'string') throw new Error('the receiver has no address');
  const [topic] = await stack.pubsub.createTopic(options.topic);
  const [push]: [Subscription, ...unknown[]] = await topic.createSubscription(`${options.topic}-push`, {
    pushConfig: { pushEndpoint: `http://127.0.0.1:${address.port}/` },
    ackDeadlineSeconds: 10,
    retryPolicy: { minimumBackoff: { seconds: 0 }, maximumBackoff: { seconds: 1 } },
  });

  const instanceOf = async (id: string): Promise<InstanceState> =>
    (await refs.instance(db, id).withConverter(STORED).get()).data() as unknown as InstanceState;
  return {
    stack,
    folder,
    deploy,
    instanceOf,
    ranSteps: async (id) =>
      (await jobsOf(db, id))
        .filter((j) => j.status === 'DONE')
        .sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime())
        .map((j) => j.activityId),
    waitingAt: (id, caseId, wait) =>
      waitFor(`${caseId} waiting at ${wait}`, async () => {
        const tokens = Object.values(
          ((await refs.instance(db, id).get()).get('tokens') ?? {}) as Record<string, Token>,
        );
        return tokens.some((t) => t.status === 'WAITING_MESSAGE' && t.activityId === wait) &&
          (await waitingPointsOf(db, id, caseId)).length > 0
          ? true
          : undefined;
      }),
    completed: (id) =>
      waitFor(`instance ${id} COMPLETED`, async () => {
        const instance = await instanceOf(id);
        return instance.status === 'COMPLETED' ? instance : undefined;
      }),
    start: (processKey, caseId, variables = {}) => startOverHttp(stack, processKey, caseId, { caseId, ...variables }),
    async approve(caseId) {
      await stack.pubsub
        .topic(options.topic)
        .publishMessage({ json: { caseId, eventId: `approved-${caseId}` }, attributes: { eventType: 'Approved' } });
      await waitFor(`Approved for ${caseId}, DONE`, async () => {
        const doc = (await db.collection(INBOX).where('correlationKey', '==', caseId).get()).docs[0];
        if (doc === undefined) return undefined;
        if (doc.get('status') === 'OPEN') await relayOnStack(db, stack);
        return (await doc.ref.get()).get('status') === 'DONE' ? true : undefined;
      });
    },
    async stop() {
      await push.delete();
      if (receiver.listening) await new Promise((resolve) => receiver.close(resolve));
      await stack.stop();
      await rm(folder, { recursive: true, force: true });
    },
  };
}
