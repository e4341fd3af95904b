import type { Firestore } from '@google-cloud/firestore';
import type * as PubSubModule from '@google-cloud/pubsub';
import type { Config } from './config';
import { lazy, lazyAsync } from './core/lazy';
import type { Engine } from './engine/engine';
import type { AsyncHandler } from './jobs/handlers';
import type { JobQueue } from './tasks/job-queue';
import type { PayloadStore } from './storage/payload-store';

/**
 * Clients and the engine, shared by the functions of one process and created
 * on first use: a function only pays (in cold start) for what it touches.
 */
export interface Runtime {
  readonly db: () => Firestore;
  readonly engine: () => Promise<Engine>;
  readonly handlers: () => Readonly<Record<string, AsyncHandler>>;
  /** The jobs queue (INBOX_TASKS_QUEUE), POSTing to runJob at `runJobUrl`. */
  readonly queue: (runJobUrl: string) => JobQueue;
  /** The timers queue (INBOX_TIMERS_QUEUE), POSTing to fireTimer at `fireTimerUrl`. */
  readonly timerQueue: (fireTimerUrl: string) => JobQueue;
  /** Cloud Storage: offloaded payloads (INBOX_PAYLOAD_BUCKET) and senders' referenced objects. */
  readonly payloadStore: () => PayloadStore;
}

export function createRuntime(config: Config): Runtime {
  const db = lazy(() => (require('./firestore') as typeof import('./firestore')).createFirestore(config.projectId));
  const pubsub = lazy(() => {
    const { PubSub } = require('@google-cloud/pubsub') as typeof PubSubModule;
    return new PubSub({ projectId: config.projectId });
  });
  const handlers = lazy(() =>
    (require('./jobs/handlers') as typeof import('./jobs/handlers')).workOrderHandlers({
      db,
      providerTopic: config.providerTopic,
      payloadStore: () => payloadStore(),
      publish: (topic, data, attributes) => pubsub().topic(topic).publishMessage({ data, attributes: { ...attributes } }),
    }),
  );
  const engine = lazyAsync(async () => {
    const { loadEngine, defaultBpmnDir } = await import('./engine/deployed');
    const { inboxBuffer } = await import('./relay/buffer');
    // The inbox is the engine's message buffer: a token that starts waiting takes its early message at once.
    return loadEngine(config.bpmnDir ?? defaultBpmnDir(), {}, new Set(Object.keys(handlers())), inboxBuffer(config.relay.retentionMs, config.relay.recordRetentionMs));
  });
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
  const payloadStore = lazy(() => (require('./storage/gcs-payload-store') as typeof import('./storage/gcs-payload-store')).createGcsPayloadStore(config.projectId));
  return { db, engine, handlers, payloadStore, queue: (runJobUrl) => queueFor('jobs', runJobUrl), timerQueue: (fireTimerUrl) => queueFor('timers', fireTimerUrl) };
}
