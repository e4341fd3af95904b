import type * as Tasks from '@google-cloud/tasks';
import type * as Grpc from '@grpc/grpc-js';
import type { Config } from '../config';

/**
 * Where the engine sends async steps. The only implementation is Cloud Tasks
 * (the real client; locally pointed at the project's emulator).
 */
export interface JobQueue {
  /** Creates the task that runs `jobId`. 'EXISTS': a task of that name exists or existed (dedup). */
  enqueue(jobId: string): Promise<'CREATED' | 'EXISTS'>;
}

const ALREADY_EXISTS = 6;

/**
 * A Cloud Tasks queue that POSTs `{ "jobId": ... }` to runJob. The task is
 * named after the job id (a hash already: Cloud Tasks dedups names, and
 * sequential names are slow), so a second enqueue of a job is ALREADY_EXISTS.
 * The client is created on first use, keeping it out of cold starts.
 */
export function cloudTasksQueue(config: Config, runJobUrl: string): JobQueue {
  const { location, queue, serviceAccount, emulatorHost } = config.tasks;
  type Client = Tasks.CloudTasksClient;
  let client: Client | undefined;
  const getClient = (): Client => {
    if (client === undefined) {
      const { CloudTasksClient } = require('@google-cloud/tasks') as typeof Tasks;
      if (emulatorHost === null) {
        client = new CloudTasksClient();
      } else {
        const { credentials } = require('@grpc/grpc-js') as typeof Grpc;
        const [host, port] = emulatorHost.split(':');
        // universeDomain set: otherwise the client looks for Google credentials (and probes the metadata server) first.
        client = new CloudTasksClient({ apiEndpoint: host, port: Number(port), sslCreds: credentials.createInsecure(), universeDomain: 'googleapis.com' });
      }
    }
    return client;
  };
  const parent = `projects/${config.projectId}/locations/${location}/queues/${queue}`;
  return {
    async enqueue(jobId) {
      try {
        await getClient().createTask({
          parent,
          task: {
            name: `${parent}/tasks/${jobId}`,
            httpRequest: {
              httpMethod: 'POST',
              url: runJobUrl,
              headers: { 'Content-Type': 'application/json' },
              body: Buffer.from(JSON.stringify({ jobId })),
              ...(serviceAccount === null ? {} : { oidcToken: { serviceAccountEmail: serviceAccount, audience: runJobUrl } }),
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
