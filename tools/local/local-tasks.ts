/**
 * The local Cloud Tasks emulator as this project uses it: the queues its
 * configuration names and the settings that point the functions at the
 * emulator and make runJob and fireTimer trust the emulator's OIDC tokens. Shared by the
 * local stack (`npm start`, the demo) and `npm run tasks-emulator`.
 */
import type { CloudTasksEmulator } from '@inbox/cloud-tasks-emulator';
import type { Config } from '../../functions/src/config';

/** Retries long enough to outlast a Firestore outage of seconds, short enough to heal in seconds on a laptop. */
const LOCAL_RETRY = { maxAttempts: 100, minBackoff: { nanos: 100_000_000 }, maxBackoff: { seconds: 2 } };

/** `projects/P/locations/L` of the configuration's queues. */
export function tasksLocation(config: Config): string {
  return `projects/${config.projectId}/locations/${config.tasks.location}`;
}

/** A queue as both the emulator's start options and the real client's createQueue take it. */
export interface LocalQueue {
  readonly name: string;
  readonly retryConfig: typeof LOCAL_RETRY;
}

/** The queues the configuration names: INBOX_TASKS_QUEUE (jobs, to runJob), INBOX_TIMERS_QUEUE (timers, to fireTimer) and INBOX_RELAY_QUEUE (the fast path). */
export function localQueues(config: Config): LocalQueue[] {
  const location = tasksLocation(config);
  return [config.tasks.queue, config.tasks.timersQueue, config.relay.queue].map((queue) => ({
    name: `${location}/queues/${queue}`,
    retryConfig: LOCAL_RETRY,
  }));
}

/**
 * INBOX_* settings for functions that use `emulator`: its host, the account
 * the tasks ask a token for (INBOX_TASKS_SERVICE_ACCOUNT, which runJob and
 * fireTimer alone accept; `inbox-tasks@PROJECT` unless one is given) and the
 * issuer and keys they check those tokens against.
 */
export function localTasksEnv(
  emulator: Pick<CloudTasksEmulator, 'host' | 'oidc'>,
  projectId: string,
  serviceAccount: string | null = null,
): Record<string, string> {
  return {
    INBOX_TASKS_EMULATOR_HOST: emulator.host,
    INBOX_TASKS_SERVICE_ACCOUNT: serviceAccount ?? `inbox-tasks@${projectId}.iam.gserviceaccount.com`,
    INBOX_TASKS_OIDC_ISSUER: emulator.oidc.issuer,
    INBOX_TASKS_OIDC_CERTS_URL: emulator.oidc.certsUrl,
  };
}
