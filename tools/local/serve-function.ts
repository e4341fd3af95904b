import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { freePort } from '../emulators/ports';

/** Repository root: functions are served from here, as gcloud deploys them (package.json main → dist/). */
export const REPO_ROOT = join(__dirname, '..', '..');

export interface ServedFunction {
  readonly target: string;
  /** `http://127.0.0.1:PORT/` */
  readonly url: string;
  readonly port: number;
  /** Process id of the Functions Framework process (for RSS readings). */
  readonly pid: number;
  /** Every stdout line the function wrote (its structured logs), parsed when JSON. */
  readonly logs: Array<Record<string, unknown>>;
  /** SIGTERM, SIGKILL after 5 s; resolves when the process is gone. */
  stop(): Promise<void>;
  /** SIGKILL at once, as a crash or an instance the platform reclaims; resolves when the process is gone. */
  kill(): Promise<void>;
}

export interface ServeOptions {
  readonly target: string;
  readonly env: Readonly<Record<string, string>>;
  readonly port?: number;
  /** Echo the function's output to this process's stderr. */
  readonly echo?: boolean;
  readonly readyTimeoutMs?: number;
  /** Keep the function's log lines in `logs` (default) or send them to /dev/null (benchmarks). */
  readonly logs?: 'capture' | 'discard';
  /** Called with each log line instead of keeping it in `logs` (long-running stacks keep counts, not lines). */
  readonly onLog?: (line: Record<string, unknown>, raw: string) => void;
  /** Directory holding the function's package (default: the repository root). */
  readonly source?: string;
  /** Extra node flags, e.g. ['--cpu-prof'] for profiling. */
  readonly nodeArgs?: readonly string[];
  /**
   * Serve with the Functions Framework installed in `source` (its own
   * node_modules, as the platform does) instead of the repository's, with
   * `source` as the working directory.
   */
  readonly ownFramework?: boolean;
  /**
   * Start from an empty environment (PATH and HOME only) plus `env`, as a
   * platform does, instead of this process's environment (default: inherit,
   * with METADATA_SERVER_DETECTION=none).
   */
  readonly cleanEnv?: boolean;
}

/** Function processes still running; killed when this process exits, so an interrupted run leaves none behind. */
const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function killOnExit(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // 'exit' handlers may only do synchronous work: a signal to each child is that.
  process.once('exit', () => {
    for (const c of live) c.kill('SIGKILL');
  });
}

/**
 * Runs one function of the compiled project under the real Functions
 * Framework CLI on a loopback port, exactly as `npx functions-framework
 * --target=NAME` from the repository root would. Requires `npm run build`.
 */
export async function serveFunction(options: ServeOptions): Promise<ServedFunction> {
  const port = options.port ?? (await freePort());
  const source = options.source ?? REPO_ROOT;
  const home = options.ownFramework === true ? source : REPO_ROOT;
  // The package's exports hide its CLI module; its bin entry points here.
  const cli = join(home, 'node_modules', '@google-cloud', 'functions-framework', 'build', 'src', 'main.js');
  const base: NodeJS.ProcessEnv =
    options.cleanEnv === true
      ? { PATH: process.env.PATH, HOME: process.env.HOME }
      : { ...process.env, METADATA_SERVER_DETECTION: 'none' };
  const child: ChildProcess = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), cli, `--target=${options.target}`, `--port=${port}`, `--source=${source}`],
    {
      cwd: home,
      env: { ...base, ...options.env, PORT: String(port) },
      stdio: ['ignore', options.logs === 'discard' ? 'ignore' : 'pipe', 'pipe'],
    },
  );
  killOnExit(child);
  const logs: Array<Record<string, unknown>> = [];
  let output = '';
  let buffered = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      if (options.echo === true) process.stderr.write(`[${options.target}] ${line}\n`);
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (options.onLog === undefined) logs.push(parsed);
        else options.onLog(parsed, line);
      } catch {
        output = keepTail(`${output}${line}\n`);
      }
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output = keepTail(output + chunk.toString('utf8'));
    if (options.echo === true) process.stderr.write(`[${options.target}] ${chunk.toString('utf8')}`);
  });

  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 20_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${options.target} exited with ${child.exitCode}:\n${output}`);
    try {
      await fetch(url, { method: 'GET' });
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`${options.target} did not answer on ${url}:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    target: options.target,
    url,
    port,
    pid: child.pid ?? -1,
    logs,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Non-JSON output is kept for start-up errors only; a long-running function must not grow it forever. */
function keepTail(text: string): string {
  return text.length > 65_536 ? text.slice(-65_536) : text;
}
