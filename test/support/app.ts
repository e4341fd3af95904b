/**
 * The app the system's tests run: the fixture app (test/fixtures/app), a
 * small neutral process shaped like a real one (a hand-over, a wait with a
 * deadline that escalates, a step that reads a claim check and writes a
 * record once). Every helper of test/support serves it, so no test of the
 * system needs an example app; the examples test themselves beside them
 * (examples/APP/test/) and pass their own app where a helper takes one.
 */
import type { PubSub } from '@google-cloud/pubsub';
import type { Firestore } from '@google-cloud/firestore';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { App, AppContext, ClaimRead, StepHandler } from '../../functions/src/app';
import { registryOf } from '../../functions/src/apps/load-app';
import { parseGsUri } from '../../functions/src/core/gs-uri';
import type { MessageRegistry } from '../../functions/src/receiver/registry';
import type { PayloadStore } from '../../functions/src/storage/payload-store';
import fixtureApp from '../fixtures/app';

export const REPO_ROOT = join(__dirname, '..', '..');

/** The fixture app's folder as INBOX_APP names it (relative to the repository root). */
export const FIXTURE_APP = 'test/fixtures/app';
/** Its folder, absolute. */
export const FIXTURE_APP_DIR = join(REPO_ROOT, FIXTURE_APP);
/** Its models folder (what the runtime's modelsDir is without INBOX_BPMN_DIR). */
export const FIXTURE_MODELS = join(FIXTURE_APP_DIR, fixtureApp.models);
/** What a served function, the CLI or the stack needs in its environment to run the fixture app. */
export const FIXTURE_ENV = { INBOX_APP: FIXTURE_APP } as const;

export { fixtureApp };

/** What the console's whoami says of the fixture app (its `app`): written out, so a test holds the console to it. */
export const FIXTURE_APP_SUMMARY = { name: 'fixture', messages: ['TaskCompleted', 'TaskOpened'] } as const;

/** The fixture app's message types, as the receiver and the relay read them. */
export const FIXTURE_REGISTRY: MessageRegistry = registryOf(fixtureApp);

/**
 * A models folder of a test's own (a temporary directory) with the fixture
 * app's models and `extra` (paths of other .bpmn files): what INBOX_BPMN_DIR
 * names when a test runs the CLI with models besides the app's. A start
 * refuses a folder in which one of the app's steps has no task (or a model
 * waits for a message the app does not declare), so the app's own models
 * are always in it. `remove()` deletes the folder.
 */
export function modelsDirWith(...extra: readonly string[]): { readonly dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'inbox-models-'));
  for (const file of readdirSync(FIXTURE_MODELS).filter((f) => f.endsWith('.bpmn')))
    copyFileSync(join(FIXTURE_MODELS, file), join(dir, file));
  for (const file of extra) copyFileSync(file, join(dir, basename(file)));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A context whose clients refuse use: for listing an app's step ids. */
const NO_CLIENTS: AppContext = {
  db: () => {
    throw new Error('no Firestore client here');
  },
  publish: async () => {
    throw new Error('no Pub/Sub client here');
  },
  readClaim: async () => {
    throw new Error('no Cloud Storage client here');
  },
};

/** The ids of an app's async steps (the tasks its handlers run). */
export const stepIdsOf = (app: App): readonly string[] => Object.keys(app.steps(NO_CLIENTS)).sort();

/** What a test hands the handlers of an app: a Firestore client, a Pub/Sub client, and Cloud Storage for claim checks (default: none). */
export interface TestClients {
  readonly db: () => Firestore;
  readonly pubsub: () => PubSub;
  readonly payloadStore?: () => PayloadStore;
}

/**
 * The AppContext the runtime builds (functions/src/runtime.ts), from a
 * test's clients: publish refuses a topic the app does not declare, as a
 * deployment would; readClaim reads pinned to the generation. Without a
 * payload store, a read is a technical failure (the step is retried).
 */
export function appContextOf(app: App, clients: TestClients): AppContext {
  return {
    db: clients.db,
    publish: async (topic, data, attributes = {}) => {
      if (!app.publishes.includes(topic))
        throw new Error(`the app ${app.name} publishes to ${topic}, which its publishes list does not declare`);
      return clients
        .pubsub()
        .topic(topic)
        .publishMessage({ data, attributes: { ...attributes } });
    },
    readClaim: async (uri): Promise<ClaimRead> => {
      const ref = parseGsUri(uri);
      if (!ref.ok) return { kind: 'INVALID', why: ref.error };
      if (clients.payloadStore === undefined)
        throw new Error('this test gave the handlers no payload store (a claim check cannot be read)');
      return clients.payloadStore().read(ref.value);
    },
  };
}

/** The handlers of an app's async steps with a test's clients. */
export function appHandlers(app: App, clients: TestClients): Readonly<Record<string, StepHandler>> {
  return app.steps(appContextOf(app, clients));
}

/** The fixture app's names its tests read: its outbox topic and what its steps publish and write. */
export {
  ESCALATIONS,
  escalationRef,
  OUTBOX_EVENT_TYPES,
  OUTBOX_TOPIC,
  SETTLEMENTS,
  settlementRef,
} from '../fixtures/app/steps';
