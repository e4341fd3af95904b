import type { Firestore } from '@google-cloud/firestore';
import type * as PubSubModule from '@google-cloud/pubsub';
import type { App, AppContext, ClaimRead } from './app';
import type { Config } from './config';
import { lazy, lazyAsync } from './core/lazy';
import type { Engine } from './engine/engine';
import type { ProcessModel } from './bpmn/model';
import type { AsyncHandler } from './jobs/handlers';
import type { MessageRegistry } from './receiver/registry';
import type { JobQueue } from './tasks/job-queue';
import type { PayloadStore } from './storage/payload-store';

/**
 * Clients, the app and its engine, shared by the functions of one process
 * and created on first use: a function only pays (in cold start) for what
 * it touches.
 */
export interface Runtime {
  readonly db: () => Firestore;
  /** The app INBOX_APP names (apps/load-app.ts), loaded on first use; a declaration it refuses throws, naming the app's file. */
  readonly app: () => App;
  /** The app's message types: what the receivers recognise and the CLI lists. */
  readonly registry: () => MessageRegistry;
  /** The folder of the models the engine runs: INBOX_BPMN_DIR, else the app's. */
  readonly modelsDir: () => string;
  readonly engine: () => Promise<Engine>;
  /**
   * The app's step handlers, by task type or element id, and the system's for the messages its models publish (its
   * `sends`), by process and element (jobs/publish-steps.ts): runJob tries the latter first.
   */
  readonly handlers: () => Promise<Readonly<Record<string, AsyncHandler>>>;
  /**
   * The system's publishing steps of one version of a model (the instance's own, which may be older than the
   * deployed one): runJob looks a job's publish up here, so an element only an older version draws still publishes.
   */
  readonly publishStepsOf: (model: ProcessModel) => Readonly<Record<string, AsyncHandler>>;
  /** The jobs queue (INBOX_TASKS_QUEUE), POSTing to runJob at `runJobUrl`. */
  readonly queue: (runJobUrl: string) => JobQueue;
  /** The timers queue (INBOX_TIMERS_QUEUE), POSTing to fireTimer at `fireTimerUrl`. */
  readonly timerQueue: (fireTimerUrl: string) => JobQueue;
  /** Cloud Storage: offloaded payloads (INBOX_PAYLOAD_BUCKET) and senders' referenced objects. */
  readonly payloadStore: () => PayloadStore;
}

/**
 * `keepVersions`: store the versions of the models this runtime loads in
 * processVersions (the functions: what they run is deployed). The CLI runs
 * an operator's checkout, which may be ahead of or behind the deployment,
 * so it stores nothing (`inbox versions --register` does, on purpose).
 */
export function createRuntime(config: Config, options: { readonly keepVersions?: boolean } = {}): Runtime {
  const keepVersions = options.keepVersions ?? true;
  const db = lazy(() => (require('./firestore') as typeof import('./firestore')).createFirestore(config.projectId));
  const pubsub = lazy(() => {
    const { PubSub } = require('@google-cloud/pubsub') as typeof PubSubModule;
    return new PubSub({ projectId: config.projectId });
  });
  const payloadStore = lazy(() =>
    (require('./storage/gcs-payload-store') as typeof import('./storage/gcs-payload-store')).createGcsPayloadStore(
      config.projectId,
    ),
  );
  const loaded = lazy(() => (require('./apps/load-app') as typeof import('./apps/load-app')).loadApp(config.app));
  const app = (): App => loaded().app;
  const registry = lazy(() => (require('./apps/load-app') as typeof import('./apps/load-app')).registryOf(app()));
  const modelsDir = (): string =>
    config.bpmnDir ??
    (require('./apps/load-app') as typeof import('./apps/load-app')).modelsFolder(loaded().folder, app());
  const context: AppContext = {
    db,
    publish: async (topic, data, attributes = {}) => {
      // The deployment granted publishing on the declared topics only: say so here, not as a PERMISSION_DENIED later.
      if (!app().publishes.includes(topic))
        throw new Error(
          `the app ${app().name} publishes to ${topic}, which its publishes list does not declare (deploy.sh creates and grants only those): add it to publishes`,
        );
      return pubsub()
        .topic(topic)
        .publishMessage({ data, attributes: { ...attributes } });
    },
    readClaim: async (uri): Promise<ClaimRead> => {
      const { parseGsUri } = require('./core/gs-uri') as typeof import('./core/gs-uri');
      const ref = parseGsUri(uri);
      if (!ref.ok) return { kind: 'INVALID', why: ref.error };
      return payloadStore().read(ref.value);
    },
  };
  const steps = lazy(() => app().steps(context));
  const engine = lazyAsync(async () => {
    const { loadAppEngine } = await import('./apps/app-engine');
    const { inboxBuffer } = await import('./relay/buffer');
    const { registerVersions } = await import('./engine/store/versions');
    const { readModelXml } = await import('./engine/deployed');
    // The inbox is the engine's message buffer: a token that starts waiting takes its early message at once.
    const loadedEngine = await loadAppEngine(
      loaded(),
      modelsDir(),
      Object.keys(steps()),
      inboxBuffer(config.relay.retentionMs, config.relay.recordRetentionMs),
    );
    // Each version this deployment runs is kept, so its instances run on it after the next deploy (one read a model).
    // The files are read (once) only when a version is not stored yet; what is read is checked against the version.
    let files: Promise<ReadonlyMap<string, string>> | undefined;
    if (keepVersions)
      await registerVersions(
        db(),
        loadedEngine.processKeys.map((key) => loadedEngine.model(key)),
        async (key) => (await (files ??= readModelXml(modelsDir()))).get(key) ?? null,
        new Date(),
      );
    return loadedEngine;
  });
  const handlers = lazyAsync(async (): Promise<Readonly<Record<string, AsyncHandler>>> => {
    const { publishSteps } = await import('./jobs/publish-steps');
    const loadedEngine = await engine();
    const models = loadedEngine.processKeys.map((key) => loadedEngine.model(key));
    return { ...publishSteps(models, app(), context.publish), ...steps() };
  });
  const byVersion = new WeakMap<ProcessModel, Readonly<Record<string, AsyncHandler>>>();
  const publishStepsOf = (model: ProcessModel): Readonly<Record<string, AsyncHandler>> => {
    let found = byVersion.get(model);
    if (found === undefined) {
      const { publishSteps } = require('./jobs/publish-steps') as typeof import('./jobs/publish-steps');
      found = publishSteps([model], app(), context.publish);
      byVersion.set(model, found);
    }
    return found;
  };
  const queues = new Map<string, JobQueue>();
  // The Cloud Tasks client is loaded on the first task, not at start-up.
  const queueFor = (kind: 'jobs' | 'timers', url: string): JobQueue => {
    const key = `${kind} ${url}`;
    let q = queues.get(key);
    if (q === undefined) {
      const tasks = require('./tasks/job-queue') as typeof import('./tasks/job-queue');
      q = kind === 'jobs' ? tasks.cloudTasksQueue(config, url) : tasks.timerQueue(config, url);
      queues.set(key, q);
    }
    return q;
  };
  return {
    db,
    app,
    registry,
    modelsDir,
    engine,
    handlers,
    publishStepsOf,
    payloadStore,
    queue: (runJobUrl) => queueFor('jobs', runJobUrl),
    timerQueue: (fireTimerUrl) => queueFor('timers', fireTimerUrl),
  };
}
