import * as grpc from '@grpc/grpc-js';
import { Dispatcher, type DispatchRecord } from './dispatcher';
import { Faults, type DispatchFault, type DispatchFilter } from './faults';
import type { QueueMsg } from './messages';
import { parseQueueName, shortName } from './names';
import { startOidcIssuer, type OidcIssuer, type OidcOptions } from './oidc';
import { cloudTasksService } from './protos';
import { Registry } from './queues';
import { cloudTasksHandlers } from './server';
import type { HttpTarget } from './tasks';

/** A live task as the emulator sees it (introspection for tests). */
export interface EmulatorTask {
  /** Full name, `projects/P/locations/L/queues/Q/tasks/ID`. */
  readonly name: string;
  /** Full queue name. */
  readonly queue: string;
  readonly url: string;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Undefined: the task has no body. */
  readonly body?: Buffer | undefined;
  /** When the next attempt is due (or was, while in flight). */
  readonly scheduleTime: Date;
  readonly dispatchCount: number;
  readonly responseCount: number;
  readonly inFlight: boolean;
  /**
   * The OIDC/OAuth token the task asked Cloud Tasks to attach. An OIDC token
   * is signed by {@link CloudTasksEmulator.oidc} at every attempt; an OAuth
   * access token cannot be minted locally and is not sent.
   */
  readonly authRequested?: HttpTarget['auth'];
}

/** A running emulator. */
export interface CloudTasksEmulator {
  /** "127.0.0.1:PORT", for {@link emulatorClient} or an endpoint setting. */
  readonly host: string;
  readonly port: number;
  /**
   * The issuer of the tasks' OIDC tokens: its `issuer` and `certsUrl` are what
   * a verifier must trust (see the package README); `sign` makes tokens with
   * the same key, e.g. an expired one for a test.
   */
  readonly oidc: Pick<OidcIssuer, 'issuer' | 'certsUrl' | 'jwksUrl' | 'kid' | 'sign' | 'claims'>;
  /** Full names of the queues created from {@link CloudTasksEmulatorOptions.queues}, in order. */
  readonly createdQueues: readonly string[];
  /** The next `count` CreateTask calls fail with `code` (default UNAVAILABLE) and create nothing. */
  failNextCreateTask(count?: number, code?: grpc.status): void;
  /**
   * Dispatch attempts fail with `fault` (default: the target "answered" 503)
   * without calling the target: the next `rule` attempts if it is a number,
   * else every attempt the filter accepts until the returned function is
   * called. They count as attempts and are retried like real failures.
   */
  failDispatches(rule: number | DispatchFilter, fault?: DispatchFault): () => void;
  /** Drops every pending injected fault. */
  clearFaults(): void;
  /** Live tasks, of one queue (full name or short id) or of all, ordered by schedule time. */
  tasks(queue?: string): EmulatorTask[];
  /** Every finished dispatch attempt, oldest first. */
  readonly dispatchLog: readonly DispatchRecord[];
  /**
   * Resolves once no task is in flight and no task waits in a running queue
   * (tasks of paused queues do not count; a task scheduled later does). Also
   * resolves on stop().
   */
  idle(): Promise<void>;
  /** Aborts in-flight dispatches, clears every timer and closes the server (forced after a short grace). Idempotent. */
  stop(): Promise<void>;
}

/** Options of {@link startCloudTasksEmulator}. */
export interface CloudTasksEmulatorOptions {
  /** Port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  /**
   * How long the name of a completed, given-up or deleted task stays
   * reserved (CreateTask with it answers ALREADY_EXISTS). Default 1 hour,
   * Cloud Tasks' retention for deleted tasks of API-created queues.
   */
  tombstoneMs?: number;
  /** Receives one line per RPC and per dispatch attempt. Default: silent. */
  log?: (line: string) => void;
  /** The OIDC token issuer: its `iss` claim and the port of its key server. */
  oidc?: OidcOptions;
  /**
   * Queues to create at start, as CreateQueue would (full names,
   * `projects/P/locations/L/queues/Q`, optional retry and rate settings).
   * Without them the emulator starts empty and CreateTask answers NOT_FOUND
   * until a client creates the queue.
   */
  queues?: readonly QueueMsg[];
}

const SHUTDOWN_GRACE_MS = 1000;

/** Starts a Cloud Tasks emulator on 127.0.0.1. */
export async function startCloudTasksEmulator(opts: CloudTasksEmulatorOptions = {}): Promise<CloudTasksEmulator> {
  const log = opts.log ?? ((): void => undefined);
  const faults = new Faults();
  const oidc = await startOidcIssuer(opts.oidc);
  // The registry reports changes to the dispatcher, which reads the registry;
  // neither calls the other before both exist.
  const dispatcher = new Dispatcher(
    () => reg,
    faults,
    log,
    (request) => oidc.sign(request),
  );
  const reg = new Registry(opts.tombstoneMs ?? 3_600_000, () => dispatcher.requestPump());
  let createdQueues: string[];
  try {
    // Validated exactly as a CreateQueue call (a bad name or setting throws its RpcError here).
    createdQueues = (opts.queues ?? []).map(
      (queue) => reg.createQueue(parseQueueName(queue.name).location, queue).name,
    );
  } catch (err) {
    await oidc.close();
    throw err;
  }

  const server = new grpc.Server();
  server.addService(cloudTasksService(), cloudTasksHandlers({ registry: reg, dispatcher, faults, log }));
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`127.0.0.1:${opts.port ?? 0}`, grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err === null ? resolve(bound) : reject(err),
    );
  }).catch(async (err: unknown) => {
    await oidc.close();
    throw err;
  });
  const host = `127.0.0.1:${port}`;
  log(`cloud tasks emulator listening on ${host}; OIDC tokens issued as ${oidc.issuer}, keys at ${oidc.certsUrl}`);
  for (const name of createdQueues) log(`queue ${name} created at start`);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= new Promise<void>((resolve) => {
      dispatcher.stop();
      faults.clear();
      // tryShutdown waits for open calls; a client that never hangs up must not hold us.
      const force = setTimeout(() => server.forceShutdown(), SHUTDOWN_GRACE_MS);
      force.unref();
      server.tryShutdown(() => {
        clearTimeout(force);
        void oidc.close().then(resolve);
      });
    });
    return stopping;
  };

  return {
    host,
    port,
    oidc: {
      issuer: oidc.issuer,
      certsUrl: oidc.certsUrl,
      jwksUrl: oidc.jwksUrl,
      kid: oidc.kid,
      sign: (r) => oidc.sign(r),
      claims: (r) => oidc.claims(r),
    },
    createdQueues,
    failNextCreateTask: (count, code) => faults.failNextCreateTask(count, code),
    failDispatches: (rule, fault) => faults.failDispatches(rule, fault),
    clearFaults: () => faults.clear(),
    tasks(queue) {
      const out: EmulatorTask[] = [];
      for (const q of reg.allQueues()) {
        if (queue !== undefined && q.name !== queue && shortName(q.name) !== queue) continue;
        for (const t of q.tasks.values()) {
          out.push({
            name: t.name,
            queue: t.queue,
            url: t.http.url,
            method: t.http.method,
            headers: t.http.headers,
            body: t.http.body,
            scheduleTime: new Date(t.scheduleMs),
            dispatchCount: t.dispatchCount,
            responseCount: t.responseCount,
            inFlight: t.inFlight > 0,
            authRequested: t.http.auth,
          });
        }
      }
      return out.sort((a, b) => a.scheduleTime.getTime() - b.scheduleTime.getTime() || a.name.localeCompare(b.name));
    },
    get dispatchLog() {
      return dispatcher.log;
    },
    idle: () => dispatcher.idle(),
    stop,
  };
}
