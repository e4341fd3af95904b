import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { register, unregister, type Cleanable } from './cleanup';
import {
  EmulatorsUnavailableError,
  INSTALL_HINT,
  findOnPath,
  gcloudArgs,
  gcloudEnv,
  portInUse,
  unavailableReason,
  type EmulatorName,
} from './gcloud';
import { freePort } from './ports';
import { killGroupSync, spawnGroup, stopGroup, type ExitInfo, type GroupProcess } from './process-group';
import { waitFor } from './ready';

export { EmulatorsUnavailableError } from './gcloud';

/** One running emulator started by {@link startEmulators}. */
export interface EmulatorHandle {
  readonly name: EmulatorName;
  /** "127.0.0.1:PORT"; stays the same across {@link EmulatorHandle.restart}. */
  readonly host: string;
  /** Process group of the current (or, after stop, the last) run. */
  readonly pgid: number;
  /** SIGTERM to the group, SIGKILL after 5 s; resolves when the group is gone. Idempotent. */
  stop(): Promise<void>;
  /**
   * Stop, then start again on the SAME port. The Firestore emulator keeps its
   * data in memory only, so it is lost, unless `keepDataOf` names a project:
   * that project's documents are exported before the stop (the emulator's
   * export endpoint) and imported at the start (`--import-data`).
   */
  restart(options?: RestartOptions): Promise<void>;
  /** gcloud/emulator output of every run of this handle (appended on restart). */
  readonly logFile: string;
}

/** Options of {@link EmulatorHandle.restart}. */
export interface RestartOptions {
  /** Firestore only: export this project's data before the stop and import it at the start. */
  readonly keepDataOf?: string;
  /** Time to stay down between stop and start, ms (an outage). Default 0. */
  readonly downMs?: number;
}

/** The emulators started by one {@link startEmulators} call. */
export interface RunningEmulators {
  firestore?: EmulatorHandle;
  pubsub?: EmulatorHandle;
  /** Variables the Google client libraries read to target the emulators. */
  env: { FIRESTORE_EMULATOR_HOST?: string; PUBSUB_EMULATOR_HOST?: string };
  /** Stops every emulator of this set (not other sets). Idempotent. */
  stop(): Promise<void>;
}

/** Options for {@link startEmulators}. */
export interface StartEmulatorsOptions {
  /** Start the Firestore emulator. Default true. */
  firestore?: boolean;
  /** Start the Pub/Sub emulator. Default true. */
  pubsub?: boolean;
  /** Directory for the log files. Default: a fresh directory under os.tmpdir(). */
  logDir?: string;
  /** Max time for each emulator to answer on its port. Default 60000. */
  readyTimeoutMs?: number;
}

/** A free port was taken by someone else before the emulator bound it. */
class PortInUseError extends Error {}

/** How often a start is retried on a fresh port after losing the port race. */
const PORT_ATTEMPTS = 3;
const LOG_TAIL_LINES = 40;

class ManagedEmulator implements EmulatorHandle, Cleanable {
  readonly host: string;
  readonly logFile: string;
  private group: GroupProcess | undefined;
  private lastPgid = 0;
  private dataDir: string | undefined;
  private stopping: Promise<void> | undefined;

  constructor(
    readonly name: EmulatorName,
    port: number,
    logDir: string,
    private readonly gcloud: string,
    private readonly readyTimeoutMs: number,
  ) {
    this.host = `127.0.0.1:${port}`;
    this.logFile = path.join(logDir, `${name}-${port}.log`);
  }

  get pgid(): number {
    return this.lastPgid;
  }

  async start(importData?: string): Promise<void> {
    if (this.group !== undefined) throw new Error(`${this.name} emulator on ${this.host} is already running`);
    // Classify failures by this run's output only; restarts append to the same file.
    const logStart = fs.existsSync(this.logFile) ? fs.statSync(this.logFile).size : 0;
    fs.appendFileSync(
      this.logFile,
      `--- harness: starting ${this.name} on ${this.host} at ${new Date().toISOString()}\n`,
    );
    if (this.name === 'pubsub') {
      // Fresh per run (no state shared between runs), next to the log: if we
      // die before removing it, it is left where the logs are kept anyway.
      this.dataDir = fs.mkdtempSync(path.join(path.dirname(this.logFile), 'pubsub-data-'));
    }
    let group: GroupProcess;
    try {
      group = spawnGroup(
        this.gcloud,
        [
          ...gcloudArgs(this.name, this.host, this.dataDir),
          ...(importData === undefined ? [] : [`--import-data=${importData}`]),
        ],
        { logFile: this.logFile, env: gcloudEnv() },
      );
    } catch (err) {
      this.removeDataDir();
      throw err;
    }
    this.group = group;
    this.lastPgid = group.pgid;
    this.stopping = undefined;
    register(this);

    let exit: ExitInfo | undefined;
    void group.exited.then((info) => {
      exit = info;
    });
    const outcome = await waitFor(this.host, {
      timeoutMs: this.readyTimeoutMs,
      abortIf: () => (portInUse(this.readLog(logStart)) ? 'port-in-use' : exit !== undefined ? 'exited' : undefined),
    });
    if (outcome.kind === 'ready') return;

    await this.stop();
    const log = this.readLog(logStart);
    const tail = `--- last lines of ${this.logFile}:\n${lastLines(log, LOG_TAIL_LINES)}`;
    if (portInUse(log))
      throw new PortInUseError(`${this.host} was taken before the ${this.name} emulator bound it\n${tail}`);
    const reason = exit === undefined ? undefined : unavailableReason(log);
    if (reason !== undefined) {
      throw new EmulatorsUnavailableError(`The ${this.name} emulator cannot run: ${reason}.\n${INSTALL_HINT}\n${tail}`);
    }
    const why =
      exit === undefined
        ? `did not answer on http://${this.host}/ within ${this.readyTimeoutMs} ms`
        : `exited (code ${String(exit.code)}, signal ${String(exit.signal)}) before answering on ${this.host}`;
    throw new Error(`The ${this.name} emulator ${why}\n${tail}`);
  }

  stop(): Promise<void> {
    this.stopping ??= this.shutDown();
    return this.stopping;
  }

  async restart(options: RestartOptions = {}): Promise<void> {
    const exported = options.keepDataOf === undefined ? undefined : await this.exportData(options.keepDataOf);
    try {
      await this.stop();
      if ((options.downMs ?? 0) > 0) await new Promise((r) => setTimeout(r, options.downMs));
      await this.start(exported?.metadataFile);
    } finally {
      if (exported !== undefined) fs.rmSync(exported.dir, { recursive: true, force: true });
    }
  }

  /** Exports one project's documents through the Firestore emulator's export endpoint. */
  private async exportData(projectId: string): Promise<{ dir: string; metadataFile: string }> {
    if (this.name !== 'firestore') throw new Error('only the Firestore emulator keeps data across a restart');
    const dir = fs.mkdtempSync(path.join(path.dirname(this.logFile), 'firestore-export-'));
    const response = await fetch(`http://${this.host}/emulator/v1/projects/${encodeURIComponent(projectId)}:export`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ database: `projects/${projectId}/databases/(default)`, export_directory: dir }),
    });
    if (!response.ok)
      throw new Error(`Firestore emulator export of ${projectId} failed: ${response.status} ${await response.text()}`);
    // The emulator writes <dir>/firestore_export_<n>/firestore_export_<n>.overall_export_metadata.
    const [sub] = fs.readdirSync(dir);
    const metadata =
      sub === undefined
        ? undefined
        : fs.readdirSync(path.join(dir, sub)).find((f) => f.endsWith('.overall_export_metadata'));
    if (sub === undefined || metadata === undefined)
      throw new Error(`Firestore emulator export of ${projectId} wrote no metadata file under ${dir}`);
    return { dir, metadataFile: path.join(dir, sub, metadata) };
  }

  killSync(): void {
    if (this.group !== undefined) killGroupSync(this.group.pgid);
    this.removeDataDir();
  }

  private async shutDown(): Promise<void> {
    try {
      if (this.group !== undefined) await stopGroup(this.group.pgid);
    } finally {
      this.group = undefined;
      this.removeDataDir();
      unregister(this);
    }
  }

  private removeDataDir(): void {
    if (this.dataDir === undefined) return;
    fs.rmSync(this.dataDir, { recursive: true, force: true });
    this.dataDir = undefined;
  }

  private readLog(fromByte: number): string {
    try {
      return fs.readFileSync(this.logFile).subarray(fromByte).toString('utf8');
    } catch {
      return '';
    }
  }
}

function lastLines(text: string, count: number): string {
  return text.trimEnd().split('\n').slice(-count).join('\n');
}

async function startOne(
  name: EmulatorName,
  gcloud: string,
  logDir: string,
  readyTimeoutMs: number,
): Promise<ManagedEmulator> {
  for (let attempt = 1; ; attempt++) {
    const emulator = new ManagedEmulator(name, await freePort(), logDir, gcloud, readyTimeoutMs);
    try {
      await emulator.start();
      return emulator;
    } catch (err) {
      if (!(err instanceof PortInUseError) || attempt >= PORT_ATTEMPTS) throw err;
    }
  }
}

/** Stops all, then rethrows the first failure (if any). */
async function stopAll(handles: readonly EmulatorHandle[]): Promise<void> {
  const results = await Promise.allSettled(handles.map((h) => h.stop()));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
}

/**
 * Starts the real gcloud Firestore and/or Pub/Sub emulators in parallel, each
 * on a free 127.0.0.1 port in its own process group, and resolves once each
 * answers HTTP 200 on its root path. Every call starts an independent set.
 *
 * On failure, whatever did start is stopped again. Throws
 * {@link EmulatorsUnavailableError} when gcloud, a component or Java is
 * missing; other errors carry the tail of the emulator's log.
 */
export async function startEmulators(opts: StartEmulatorsOptions = {}): Promise<RunningEmulators> {
  const { firestore = true, pubsub = true, readyTimeoutMs = 60_000 } = opts;
  const names: EmulatorName[] = [];
  if (firestore) names.push('firestore');
  if (pubsub) names.push('pubsub');

  const gcloud = names.length > 0 ? findOnPath('gcloud') : undefined;
  if (names.length > 0 && gcloud === undefined) {
    throw new EmulatorsUnavailableError(`\`gcloud\` was not found on PATH.\n${INSTALL_HINT}`);
  }
  const logDir = opts.logDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'emulators-'));
  fs.mkdirSync(logDir, { recursive: true });

  const results = await Promise.allSettled(
    names.map((name) => startOne(name, gcloud ?? 'gcloud', logDir, readyTimeoutMs)),
  );
  const handles = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const errors = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  if (errors.length > 0) {
    await stopAll(handles).catch((err: unknown) => console.error('[emulators] cleanup after failed start:', err));
    throw errors.find((e) => e instanceof EmulatorsUnavailableError) ?? errors[0];
  }

  const running: RunningEmulators = { env: {}, stop: () => stopAll(handles) };
  for (const handle of handles) {
    if (handle.name === 'firestore') {
      running.firestore = handle;
      running.env.FIRESTORE_EMULATOR_HOST = handle.host;
    } else {
      running.pubsub = handle;
      running.env.PUBSUB_EMULATOR_HOST = handle.host;
    }
  }
  return running;
}
