import type * as Tasks from '@google-cloud/tasks';
import type * as Grpc from '@grpc/grpc-js';
import type { Config } from '../config';
import { traceHeaders } from '../trace/trace';

/** How one task is created. */
export interface EnqueueOptions {
  /**
   * When Cloud Tasks first dispatches it; absent or past: at once. Cloud
   * Tasks refuses a time more than 30 days (720 h) ahead (INVALID_ARGUMENT),
   * which is why timers beyond TIMER_HORIZON_MS get no task until the sweep
   * brings them near.
   */
  readonly scheduleTime?: Date;
  /** A job's instance (the job lives in its document): runJob's task body carries it. Ignored by the other queues. */
  readonly processInstanceId?: string;
}

/**
 * Where the project sends work for later: async process steps (runJob),
 * timers (fireTimer) and the receiver's fast path (relayInbox). The only
 * implementation is Cloud Tasks: the real client, locally pointed at the
 * project's emulator.
 */
export interface JobQueue {
  /** Creates the task for `id`. 'EXISTS': a task of that name exists or existed (dedup). */
  enqueue(id: string, options?: EnqueueOptions): Promise<'CREATED' | 'EXISTS'>;
}

const ALREADY_EXISTS = 6;

/** One client per process, created on first use (keeps it out of cold starts). */
let shared: { key: string; client: Tasks.CloudTasksClient } | undefined;

function clientFor(emulatorHost: string | null): Tasks.CloudTasksClient {
  const key = emulatorHost ?? 'google';
  if (shared?.key === key) return shared.client;
  const { CloudTasksClient } = require('@google-cloud/tasks') as typeof Tasks;
  let client: Tasks.CloudTasksClient;
  if (emulatorHost === null) {
    client = new CloudTasksClient();
  } else {
    const { credentials } = require('@grpc/grpc-js') as typeof Grpc;
    // split() returns at least one element, so the default never applies; it only tells the types.
    const [host = emulatorHost, port] = emulatorHost.split(':');
    // universeDomain set: otherwise the client looks for Google credentials (and probes the metadata server) first.
    client = new CloudTasksClient({
      apiEndpoint: host,
      port: Number(port),
      sslCreds: credentials.createInsecure(),
      universeDomain: 'googleapis.com',
    });
  }
  shared = { key, client };
  return client;
}

export interface TaskTarget {
  readonly queue: string;
  /** The function the task POSTs to (also the OIDC audience). */
  readonly url: string;
  /** The JSON body for an id (and the options it was enqueued with). */
  readonly body: (id: string, options: EnqueueOptions) => Readonly<Record<string, unknown>>;
  /** The account Cloud Tasks signs the task's OIDC token as; null: no token (the local emulator). */
  readonly serviceAccount: string | null;
}

/**
 * A Cloud Tasks queue of HTTP tasks named after ids that are hashes already:
 * Cloud Tasks dedups names (a second enqueue is ALREADY_EXISTS) and
 * sequential names are slow.
 */
export function taskQueue(config: Config, target: TaskTarget): JobQueue {
  const { location, emulatorHost } = config.tasks;
  const { serviceAccount } = target;
  const parent = `projects/${config.projectId}/locations/${location}/queues/${target.queue}`;
  return {
    async enqueue(id, options = {}) {
      const { scheduleTime } = options;
      try {
        await clientFor(emulatorHost).createTask({
          parent,
          task: {
            name: `${parent}/tasks/${id}`,
            // google.protobuf.Timestamp; the client takes seconds as a number.
            ...(scheduleTime === undefined
              ? {}
              : {
                  scheduleTime: {
                    seconds: Math.floor(scheduleTime.getTime() / 1000),
                    nanos: (scheduleTime.getTime() % 1000) * 1e6,
                  },
                }),
            httpRequest: {
              httpMethod: 'POST',
              url: target.url,
              // The active span's traceparent: the target's span (relayInbox, runJob, fireTimer) continues the trace.
              headers: { 'Content-Type': 'application/json', ...traceHeaders() },
              body: Buffer.from(JSON.stringify(target.body(id, options))),
              ...(serviceAccount === null
                ? {}
                : { oidcToken: { serviceAccountEmail: serviceAccount, audience: target.url } }),
            },
          },
        });
        return 'CREATED';
      } catch (err) {
        if ((err as { code?: unknown }).code === ALREADY_EXISTS) return 'EXISTS';
        throw err;
      }
    },
  };
}

/** The queue of async process steps: POSTs `{ jobId, processInstanceId }` to runJob (jobs/run-job.ts). */
export function cloudTasksQueue(config: Config, runJobUrl: string): JobQueue {
  const body = (jobId: string, { processInstanceId }: EnqueueOptions): Readonly<Record<string, unknown>> =>
    processInstanceId === undefined ? { jobId } : { jobId, processInstanceId };
  return taskQueue(config, {
    queue: config.tasks.queue,
    url: runJobUrl,
    body,
    serviceAccount: config.tasks.serviceAccount,
  });
}

/**
 * The queue of timers (INBOX_TIMERS_QUEUE): POSTs `{ timerId }` to
 * fireTimer at the timer's due time (scheduleTime). Signed as the job tasks
 * are (INBOX_TASKS_SERVICE_ACCOUNT): the same functions create both, so a
 * second account would separate nobody.
 */
export function timerQueue(config: Config, fireTimerUrl: string): JobQueue {
  return taskQueue(config, {
    queue: config.tasks.timersQueue,
    url: fireTimerUrl,
    body: (timerId) => ({ timerId }),
    serviceAccount: config.tasks.serviceAccount,
  });
}

/** The receiver's fast path: POSTs `{ inboxId }` to relayInbox. */
export function relayQueue(config: Config, relayUrl: string): JobQueue {
  return taskQueue(config, {
    queue: config.relay.queue,
    url: relayUrl,
    body: (inboxId) => ({ inboxId }),
    serviceAccount: config.relay.tasksServiceAccount,
  });
}
