/**
 * The whole system on one machine, running one app (INBOX_APP): the
 * Firestore and Pub/Sub emulators, the local Cloud Tasks emulator (jobs,
 * timers and fast-path queues), the local Cloud Storage emulator (the
 * inbox's payload bucket and a senders' bucket, for claim checks), every
 * function under the Functions Framework on its own loopback port, the
 * app's topics and push subscriptions (with dead-letter policy), a
 * simulated Cloud Scheduler calling relayInbox and sweepJobs, and the app's
 * simulated peers if it has any (its local.ts, tools/local/peers.ts).
 * `npm start` and the apps' demos build on it.
 */
import { PubSub } from '@google-cloud/pubsub';
import type { Storage } from '@google-cloud/storage';
import { emulatorClient, startCloudTasksEmulator, type CloudTasksEmulator } from '@inbox/cloud-tasks-emulator';
import { startStorageEmulator, type StorageEmulator } from '@inbox/storage-emulator';
import { createWriteStream, mkdtempSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultPayloadBucket, loadConfig } from '../../functions/src/config';
import { buildApp } from '../build/build-app';
import { freePort } from '../emulators/ports';
import { startTcpProxy, type TcpProxy } from '../faults/tcp-proxy';
import type { FunctionLogCounts, FunctionTarget, OutageReport, StackControl, StackInfo, StackStatus } from './control';
import { localQueues, localTasksEnv, tasksLocation } from './local-tasks';
import { type Peers, peersOf } from './peers';
import { every, type Schedule, type ScheduleStats } from './scheduler';
import { serveFunction, type ServedFunction } from './serve-function';
import { createTopology } from './topology';
import { useEmulators, type EmulatorSession } from './use-emulators';
import { errorMessage } from '../../functions/src/core/errors';

/** Options of {@link startLocalStack}; every one has a default suited to a laptop. */
export interface StackOptions {
  /** Google Cloud project id the emulators use. Default `demo-inbox`. */
  readonly projectId?: string;
  /** The app to run (INBOX_APP): its folder. Default: `env.INBOX_APP`, else the configuration's default. */
  readonly app?: string;
  /** Options for the app's simulated peers (its local.ts reads what it knows). */
  readonly peers?: Readonly<Record<string, unknown>>;
  /** Simulated Cloud Scheduler: relayInbox every this many ms. Default 2000 (a deployment: every minute). */
  readonly relayEveryMs?: number;
  /**
   * relayInbox instances, each with its own scheduler loop: concurrent relays,
   * as Cloud Functions scales one out. Default 1. The receiver's fast path
   * calls the first.
   */
  readonly relays?: number;
  /** Simulated Cloud Scheduler: sweepJobs every this many ms. Default 5000. */
  readonly sweepEveryMs?: number;
  /**
   * Use the emulators named by FIRESTORE_EMULATOR_HOST / PUBSUB_EMULATOR_HOST
   * when they answer (default), or always start fresh ones: only those can
   * be stopped and restarted by {@link StackControl.firestoreOutage}.
   */
  readonly reuseEmulators?: boolean;
  /** Extra INBOX_* settings for every function. */
  readonly env?: Readonly<Record<string, string>>;
  /** Spans of every function as JSON lines in `<traceDir>/spans-<target>.jsonl` (INBOX_TRACE_EXPORTER=file:…; tools/trace/ reads them). Default: none. */
  readonly traceDir?: string;
  /** Progress lines while starting. */
  readonly progress?: (line: string) => void;
  /**
   * Each function's own Firestore line: called once per served function with
   * its target and the host it would reach Firestore through (the outage
   * gate, or the receiver's line); returns the host to give it instead, e.g.
   * a counting proxy in front of that host (bench:cost counts per function
   * this way). Default: none, every function uses the gate as before.
   */
  readonly firestoreLine?: (target: FunctionTarget, upstream: string) => Promise<string>;
  /**
   * The Pub/Sub line of the functions and of the app's peers: given
   * the emulator's host, the host to use instead (a counting proxy). Default:
   * the emulator itself. StackInfo.pubsubHost stays the emulator's.
   */
  readonly pubsubLine?: (upstream: string) => Promise<string>;
  /** The functions' line to the Cloud Tasks emulator, the same way (a tap counting CreateTask calls). Default: direct. */
  readonly tasksLine?: (upstream: string) => Promise<string>;
}

export interface LocalStack extends StackControl {
  /**
   * SIGKILLs relay instance `index` and starts it again on the same port. It
   * waits up to 5 s for a scheduled call to be under way, so the crash comes
   * mid-batch; `busy` says whether one was.
   */
  killRelay(index: number): Promise<{ readonly busy: boolean }>;
  /**
   * A deploy: every function is stopped (SIGTERM, as Cloud Run drains an
   * instance) and started again on its port with `env` over its settings,
   * one after the other; the emulators, queues, tasks and messages in flight
   * stay. E.g. `{ INBOX_BPMN_DIR: dir }` deploys the models of `dir`.
   */
  redeploy(env: Readonly<Record<string, string>>): Promise<void>;
  /** Cloud Tasks dispatch attempts fail without reaching the target (see the emulator's failDispatches). */
  failDispatches: CloudTasksEmulator['failDispatches'];
  /** The next CreateTask calls fail: the functions cannot dispatch their jobs (sweepJobs must). */
  failNextCreateTask: CloudTasksEmulator['failNextCreateTask'];
  /** The Cloud Storage emulator: its fault hooks, request log and objects (see packages/storage-emulator). */
  storage: Pick<StorageEmulator, 'faults' | 'requests' | 'objects' | 'url'>;
  /** The Cloud Tasks emulator's record: finished dispatch attempts and live tasks (bench:cost counts them). */
  tasks: Pick<CloudTasksEmulator, 'dispatchLog' | 'tasks'>;
  /** The app's simulated peers (its local.ts), or null when it has none. */
  readonly peers: Peers | null;
  /** Process ids of the served functions (several for relayInbox when `relays` > 1), for CPU readings. */
  pids(): ReadonlyArray<{ readonly target: FunctionTarget; readonly pid: number }>;
  /** Stops everything this stack started, and nothing else. */
  stop(): Promise<void>;
}

const TARGETS: readonly FunctionTarget[] = [
  'receivePubSubPush',
  'receiveDeadLetter',
  'startProcess',
  'runJob',
  'fireTimer',
  'sweepJobs',
  'relayInbox',
];

/** Settings for a laptop: short backoffs and deadlines, so failures heal in seconds rather than minutes. */
const LOCAL_ENV = {
  // The Pub/Sub emulator sends no OIDC token; runJob checks the local Cloud Tasks' (RUN_JOB_ENV).
  INBOX_PUSH_AUTH: 'disabled',
  // Pub/Sub emulator: a push answered after ~3 s stretched five delivery attempts past 90 s; 1 s keeps dead-lettering at ~20 s.
  INBOX_WRITE_TIMEOUT_MS: '1000',
  INBOX_BACKOFF_BASE_MS: '1000',
  INBOX_BACKOFF_CAP_MS: '10000',
  INBOX_RELAY_TX_TIMEOUT_MS: '10000',
  INBOX_SWEEP_GRACE_MS: '5000',
  INBOX_RELAY_BUDGET_MS: '20000',
} as const;

/** runJob and fireTimer check the OIDC token of every task, as deployed; the emulator signs it (see `common`). */
const TASK_TARGET_ENV = { INBOX_PUSH_AUTH: 'enabled' } as const;

export async function startLocalStack(options: StackOptions = {}): Promise<LocalStack> {
  const projectId = options.projectId ?? 'demo-inbox';
  // Local only: the Google clients need not look for a GCE metadata server (they warn when it is absent).
  process.env.METADATA_SERVER_DETECTION ??= 'none';
  const progress = options.progress ?? ((): void => undefined);
  const cleanup: Array<() => Promise<void>> = [];
  const stopAll = async (): Promise<void> => {
    for (const step of cleanup.splice(0).reverse())
      await step().catch((err: unknown) => console.error('[stack] stop:', errorMessage(err)));
  };
  try {
    const emulators: EmulatorSession = await useEmulators(options.reuseEmulators ?? true);
    cleanup.push(() => emulators.stop());
    progress(
      `emulators: Firestore ${emulators.firestoreHost}, Pub/Sub ${emulators.pubsubHost}${emulators.started ? '' : ' (already running)'}`,
    );
    // Functions reach Firestore through a gate (for outages); the receiver through a second one of its own (to cut it off alone).
    const gate: TcpProxy = await startTcpProxy(emulators.firestoreHost);
    cleanup.push(() => gate.close());
    const receiverLine: TcpProxy = await startTcpProxy(gate.host);
    cleanup.push(() => receiverLine.close());
    const pubsubHost =
      options.pubsubLine === undefined ? emulators.pubsubHost : await options.pubsubLine(emulators.pubsubHost);
    const tasks: CloudTasksEmulator = await startCloudTasksEmulator();
    cleanup.push(() => tasks.stop());
    const storage: StorageEmulator = await startStorageEmulator();
    cleanup.push(() => storage.stop());
    const buckets = localBuckets(projectId, options.env);
    // The app first: a declaration it refuses stops the stack before anything is served. The functions run from dist/, so it is bundled too.
    const app =
      options.app ??
      options.env?.INBOX_APP ??
      process.env.INBOX_APP ??
      loadConfig({ GOOGLE_CLOUD_PROJECT: projectId }).app;
    const { checked } = await buildApp(app, options.env?.INBOX_BPMN_DIR ?? null);
    progress(`app ${checked.app.name} (${app}): processes ${checked.engine.processKeys.join(', ')}`);

    const logDir = mkdtempSync(join(tmpdir(), 'inbox-stack-'));
    const counts = Object.fromEntries(
      TARGETS.map((t) => [t, { lines: 0, warnings: 0, errors: 0, notAcked: 0 }]),
    ) as Record<FunctionTarget, { -readonly [K in keyof FunctionLogCounts]: number }>;
    // The task targets' URLs go into every function's settings, so their ports are chosen first.
    const runJobUrl = `http://127.0.0.1:${await freePort()}/`;
    const fireTimerUrl = `http://127.0.0.1:${await freePort()}/`;
    const common: Record<string, string> = {
      GOOGLE_CLOUD_PROJECT: projectId,
      FIRESTORE_EMULATOR_HOST: gate.host,
      PUBSUB_EMULATOR_HOST: pubsubHost,
      INBOX_RUN_JOB_URL: runJobUrl,
      INBOX_FIRE_TIMER_URL: fireTimerUrl,
      // The tasks ask for a token as the tasks account; the emulator signs it with its own key, which runJob trusts.
      ...localTasksEnv(tasks, projectId),
      ...(options.tasksLine === undefined ? {} : { INBOX_TASKS_EMULATOR_HOST: await options.tasksLine(tasks.host) }),
      // The storage client reads STORAGE_EMULATOR_HOST itself; the buckets are the ones created below.
      STORAGE_EMULATOR_HOST: storage.url,
      INBOX_PAYLOAD_BUCKET: buckets.payloads,
      INBOX_REFERENCE_BUCKETS: buckets.senders,
      INBOX_APP: app,
      ...LOCAL_ENV,
      ...options.env,
    };
    const served = new Map<FunctionTarget, ServedFunction>();
    const all: ServedFunction[] = [];
    /** What redeploy() lays over every function's settings; how each served function was started. */
    let deployed: Readonly<Record<string, string>> = {};
    const startedWith = new Map<ServedFunction, Readonly<Record<string, string>>>();
    const serve = async (
      target: FunctionTarget,
      env: Readonly<Record<string, string>> = {},
      port?: number,
    ): Promise<ServedFunction> => {
      const file: WriteStream = createWriteStream(join(logDir, `${target}.log`), { flags: 'a' });
      const count = counts[target];
      const upstream = env.FIRESTORE_EMULATOR_HOST ?? gate.host;
      const firestoreHost =
        options.firestoreLine === undefined ? upstream : await options.firestoreLine(target, upstream);
      const fn = await serveFunction({
        target,
        env: {
          ...common,
          ...(options.traceDir === undefined
            ? {}
            : { INBOX_TRACE_EXPORTER: `file:${join(options.traceDir, `spans-${target}.jsonl`)}` }),
          ...env,
          ...deployed,
          FIRESTORE_EMULATOR_HOST: firestoreHost,
        },
        ...(port === undefined ? {} : { port }),
        onLog: (line, raw) => {
          count.lines += 1;
          // The readiness probe's GET is answered 405 and logged as a WARNING: not a finding.
          if (line.severity === 'WARNING' && line.status !== 405) count.warnings += 1;
          if (line.severity === 'ERROR' || line.severity === 'CRITICAL') count.errors += 1;
          if (String(line.message).includes('not acked')) count.notAcked += 1;
          file.write(`${raw}\n`);
        },
      });
      served.set(target, fn);
      all.push(fn);
      startedWith.set(fn, env);
      cleanup.push(async () => {
        await fn.stop();
        await new Promise((resolve) => file.end(resolve));
      });
      return fn;
    };
    const relayCount = options.relays ?? 1;
    if (!Number.isInteger(relayCount) || relayCount < 1) throw new RangeError('relays: an integer of at least 1');
    const [, , ...relays] = await Promise.all([
      serve('runJob', TASK_TARGET_ENV, Number(new URL(runJobUrl).port)),
      serve('fireTimer', TASK_TARGET_ENV, Number(new URL(fireTimerUrl).port)),
      ...Array.from({ length: relayCount }, () => serve('relayInbox')),
    ]);
    const relay = relays[0] as ServedFunction;
    const [receiver, deadLetter] = await Promise.all([
      serve('receivePubSubPush', { INBOX_RELAY_URL: relay.url, FIRESTORE_EMULATOR_HOST: receiverLine.host }),
      serve('receiveDeadLetter'),
      serve('startProcess'),
      serve('sweepJobs'),
    ]);
    progress(`functions: ${[...served.values()].map((f) => `${f.target} ${f.url}`).join(', ')}`);
    const operatorConsole = await serveConsole(common, logDir);
    cleanup.push(operatorConsole.stop);
    progress(`operator console: ${operatorConsole.url} (local: loopback only, no sign-in)`);

    const config = loadConfig(common);
    await createBuckets(projectId, storage.url, [config.claims.payloadBucket, buckets.senders]);
    progress(
      `storage: ${storage.url}, buckets ${config.claims.payloadBucket} (offloaded payloads) and ${buckets.senders} (senders' objects, accepted as claim-check references)`,
    );
    const admin = emulatorClient(tasks.host);
    try {
      for (const queue of localQueues(config)) await admin.createQueue({ parent: tasksLocation(config), queue });
    } finally {
      await admin.close();
    }
    const pubsub = new PubSub({ projectId, apiEndpoint: pubsubHost });
    cleanup.push(() => pubsub.close());
    const { topology } = checked;
    await createTopology(pubsub, topology, { receiverUrl: receiver.url, deadLetterUrl: deadLetter.url });
    const startPeers = peersOf(checked.folder);
    // The peers upload as a sender would: the real client, the senders' bucket, no emulator shortcuts.
    const peers: Peers | null =
      startPeers === null
        ? null
        : await startPeers({
            pubsub,
            projectId,
            topology,
            startProcessUrl: served.get('startProcess')?.url ?? '',
            storage: await storageClient(projectId, storage.url),
            senderBucket: buckets.senders,
            options: options.peers ?? {},
          });
    if (peers !== null) cleanup.push(() => peers.stop());
    const relaySchedules: Schedule[] = relays.map((r) => every(options.relayEveryMs ?? 2_000, r.url));
    const sweepSchedule: Schedule = every(options.sweepEveryMs ?? 5_000, served.get('sweepJobs')?.url ?? '');
    cleanup.push(...relaySchedules.map((r) => () => r.stop()), () => sweepSchedule.stop());

    let outages = 0;
    const info: StackInfo = {
      projectId,
      firestoreHost: emulators.firestoreHost,
      pubsubHost: emulators.pubsubHost,
      tasksHost: tasks.host,
      storageUrl: storage.url,
      buckets: { payloads: config.claims.payloadBucket, senders: buckets.senders },
      functions: Object.fromEntries([...served].map(([t, f]) => [t, f.url])) as Record<FunctionTarget, string>,
      consoleUrl: operatorConsole.url,
      app,
      topology,
      logDir,
      emulatorsStarted: emulators.started,
    };
    return {
      info: async () => info,
      status: async (): Promise<StackStatus> => ({
        functions: structuredClone(counts),
        peers: peers === null ? null : peers.stats(),
        relaySchedule: combined(relaySchedules.map((r) => r.stats())),
        sweepSchedule: sweepSchedule.stats(),
        outages,
      }),
      async firestoreOutage(downMs: number): Promise<OutageReport> {
        const started = Date.now();
        outages += 1;
        // Close the gate first, so nothing commits after the export: a real outage loses no committed write.
        gate.setMode('refuse');
        try {
          if (emulators.firestore === null) {
            await new Promise((r) => setTimeout(r, downMs));
            return { kind: 'REFUSED', downMs, totalMs: Date.now() - started };
          }
          await emulators.firestore.restart({ keepDataOf: projectId, downMs });
          return { kind: 'RESTARTED', downMs, totalMs: Date.now() - started };
        } finally {
          gate.setMode('forward');
        }
      },
      async receiverLine(mode) {
        receiverLine.setMode(mode);
      },
      async killRelay(index) {
        const victim = relays[index];
        const schedule = relaySchedules[index];
        if (victim === undefined || schedule === undefined)
          throw new RangeError(`relay ${index}: the stack runs ${relays.length}`);
        for (const deadline = Date.now() + 5_000; !schedule.stats().inFlight && Date.now() < deadline;)
          await new Promise((r) => setTimeout(r, 50));
        const busy = schedule.stats().inFlight;
        await victim.kill();
        relays[index] = await serve('relayInbox', {}, victim.port);
        return { busy };
      },
      async redeploy(env) {
        deployed = { ...env };
        for (const old of [...all]) {
          const extra = startedWith.get(old);
          if (extra === undefined || (old.target === 'relayInbox' && !relays.includes(old))) continue;
          await old.stop();
          const fresh = await serve(old.target as FunctionTarget, extra, old.port);
          const r = relays.indexOf(old);
          if (r >= 0) relays[r] = fresh;
          all.splice(all.indexOf(old), 1);
          startedWith.delete(old);
        }
      },
      failDispatches: (rule, fault) => tasks.failDispatches(rule, fault),
      failNextCreateTask: (count, code) => tasks.failNextCreateTask(count, code),
      tasks: {
        get dispatchLog() {
          return tasks.dispatchLog;
        },
        tasks: (queue) => tasks.tasks(queue),
      },
      pids: () =>
        all
          .filter((f) => relays.includes(f) || f.target !== 'relayInbox')
          .map((f) => ({ target: f.target as FunctionTarget, pid: f.pid })),
      storage: {
        faults: storage.faults,
        requests: () => storage.requests(),
        objects: (bucket) => storage.objects(bucket),
        url: storage.url,
      },
      peers,
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

/**
 * The operator console with local access: no sign-in, so it listens on
 * 127.0.0.1 only (loopback-only.js) and answers loopback peers only (its
 * own check, console/access.ts). Its log lines go to inboxConsole.log.
 */
async function serveConsole(
  common: Readonly<Record<string, string>>,
  logDir: string,
): Promise<{ readonly url: string; readonly stop: () => Promise<void> }> {
  const file: WriteStream = createWriteStream(join(logDir, 'inboxConsole.log'), { flags: 'a' });
  const fn = await serveFunction({
    target: 'inboxConsole',
    env: { ...common, INBOX_CONSOLE_ACCESS: 'local' },
    nodeArgs: ['--require', join(__dirname, 'loopback-only.js')],
    onLog: (_line, raw) => file.write(`${raw}\n`),
  });
  return {
    url: fn.url,
    stop: async () => {
      await fn.stop();
      await new Promise((resolve) => file.end(resolve));
    },
  };
}

/** Several scheduler loops as one: summed counts, the first's last status, busy if any is. */
function combined(stats: readonly ScheduleStats[]): ScheduleStats {
  return {
    calls: stats.reduce((n, s) => n + s.calls, 0),
    failures: stats.reduce((n, s) => n + s.failures, 0),
    lastStatus: stats[0]?.lastStatus ?? null,
    inFlight: stats.some((s) => s.inFlight),
  };
}

/**
 * The stack's buckets: the inbox's own (INBOX_PAYLOAD_BUCKET, as the
 * functions derive it unless `env` names one) and the senders' bucket,
 * `<project>-sender-objects`, the one the functions accept claim-check
 * references into (INBOX_REFERENCE_BUCKETS) and the app's peers upload to.
 */
function localBuckets(
  projectId: string,
  env: Readonly<Record<string, string>> | undefined,
): { readonly payloads: string; readonly senders: string } {
  return {
    payloads: env?.INBOX_PAYLOAD_BUCKET ?? defaultPayloadBucket(projectId),
    senders: `${projectId}-sender-objects`,
  };
}

/** A real storage client on the emulator. apiEndpoint rather than STORAGE_EMULATOR_HOST: the stack leaves the environment of its own process alone. */
async function storageClient(projectId: string, storageUrl: string): Promise<Storage> {
  const { Storage } = await import('@google-cloud/storage');
  return new Storage({ projectId, apiEndpoint: storageUrl });
}

/** Creates the buckets through the real client (the emulator, like the API, refuses writes to a missing bucket). */
async function createBuckets(projectId: string, storageUrl: string, names: readonly string[]): Promise<void> {
  const client = await storageClient(projectId, storageUrl);
  for (const name of new Set(names)) await client.createBucket(name);
}
