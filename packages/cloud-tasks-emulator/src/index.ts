/**
 * A Cloud Tasks emulator for tests and local runs (Google ships none).
 *
 * A gRPC server for `google.cloud.tasks.v2.CloudTasks`, built on the .proto
 * files of the installed `@google-cloud/tasks`, that keeps queues and tasks
 * in memory and dispatches HTTP tasks to their URLs with Cloud Tasks' headers,
 * retry schedule, name de-duplication and a locally signed OIDC token (see
 * oidc.ts and the README). Production code talks to it with
 * the real CloudTasksClient, configured with an endpoint and an insecure
 * channel (see {@link emulatorClient}).
 *
 *   const emulator = await startCloudTasksEmulator();
 *   const client = emulatorClient(emulator.host);
 *   ...
 *   await client.close();
 *   await emulator.stop();
 */
import * as grpc from '@grpc/grpc-js';
import { CloudTasksClient } from '@google-cloud/tasks';

export {
  startCloudTasksEmulator,
  type CloudTasksEmulator,
  type CloudTasksEmulatorOptions,
  type EmulatorTask,
} from './emulator';
export type { DispatchRecord } from './dispatcher';
export type { DispatchAttemptInfo, DispatchFault, DispatchFilter } from './faults';
export type { QueueMsg, RetryConfigMsg, RateLimitsMsg } from './messages';
export { parseArgs, runCli, runCliAsProcess, type CliArgs, type CliExtras } from './cli';
export {
  startOidcIssuer,
  uniqueIdOf,
  type OidcClaims,
  type OidcIssuer,
  type OidcOptions,
  type TokenRequest,
} from './oidc';
export { DEFAULT_RETRY_POLICY, retryDelayMs, shouldGiveUp, type RetryPolicy } from './backoff';

/** The client options that aim a CloudTasksClient at a plaintext endpoint such as the emulator. */
export function emulatorClientOptions(host: string): {
  apiEndpoint: string;
  port: number;
  sslCreds: grpc.ChannelCredentials;
  universeDomain: string;
} {
  const colon = host.lastIndexOf(':');
  const port = Number(host.slice(colon + 1));
  if (colon <= 0 || !Number.isInteger(port) || port <= 0) throw new Error(`expected HOST:PORT, got "${host}"`);
  return {
    apiEndpoint: host.slice(0, colon),
    port,
    // Plaintext channel, and no call credentials: google-gax uses sslCreds as
    // the channel credentials as they are and never asks google-auth for a token.
    sslCreds: grpc.credentials.createInsecure(),
    // Before connecting, google-gax compares the configured universe domain
    // with the credentials' one; without this it looks for Application
    // Default Credentials (which may probe the GCE metadata server) just to
    // learn the domain.
    universeDomain: 'googleapis.com',
  };
}

/**
 * A real `@google-cloud/tasks` client aimed at the emulator at `host`
 * ("127.0.0.1:PORT"): what production configuration does with an endpoint
 * and an insecure channel. Close it with `client.close()`.
 */
export function emulatorClient(host: string): CloudTasksClient {
  return new CloudTasksClient(emulatorClientOptions(host));
}
