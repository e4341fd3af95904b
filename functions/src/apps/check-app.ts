import type { App, AppContext } from '../app';
import type { Engine } from '../engine/engine';
import { loadAppEngine } from './app-engine';
import { loadApp, modelsFolder } from './load-app';
import { type AppTopology, topologyOf } from './topology';

/** A context that refuses use: the check only asks the app which steps it has. */
const NO_CLIENTS: AppContext = {
  db: () => {
    throw new Error('the app check makes no Firestore client');
  },
  publish: async () => {
    throw new Error('the app check publishes nothing');
  },
  readClaim: async () => {
    throw new Error('the app check reads no object');
  },
};

/** What {@link checkApp} found: the app, its folder, its models folder, its steps, its engine and its topology. */
export interface CheckedApp {
  readonly app: App;
  readonly folder: string;
  readonly modelsDir: string;
  readonly steps: readonly string[];
  readonly engine: Engine;
  readonly topology: AppTopology;
}

/**
 * Loads an app and checks it as a function start does: its declaration
 * (defineApp), its models against its steps and messages, its topology.
 * Throws the first refusal, naming the app's file. What `npm run build`,
 * `inbox app` and the start of every function run.
 */
export async function checkApp(settings: {
  readonly app: string;
  readonly bpmnDir: string | null;
}): Promise<CheckedApp> {
  const loaded = loadApp(settings.app);
  const { app } = loaded;
  const steps = Object.keys(app.steps(NO_CLIENTS)).sort();
  const modelsDir = settings.bpmnDir ?? modelsFolder(loaded.folder, app);
  const engine = await loadAppEngine(loaded, modelsDir, steps, null);
  return { app, folder: loaded.folder, modelsDir, steps, engine, topology: topologyOf(app) };
}
