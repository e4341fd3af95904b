import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { GUARD_SCRIPT } from './guard-script';

/** How the leader of a spawned group ended. */
export interface ExitInfo {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** A command running in a process group of its own. */
export interface GroupProcess {
  /** Process-group id (= pid of the spawned command, the group leader). */
  readonly pgid: number;
  /**
   * Resolves when the group leader exits. Other group members (e.g. a JVM)
   * may still be running then; use {@link isGroupAlive} / {@link stopGroup}.
   */
  readonly exited: Promise<ExitInfo>;
}

/** Options for {@link spawnGroup}. */
export interface SpawnGroupOptions {
  /** stdout and stderr of the group are appended to this file. */
  readonly logFile: string;
  /** Environment of the command. Default: `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
  /** How long the guard waits between SIGTERM and SIGKILL once the spawning process died. Default 5000. */
  readonly orphanGraceMs?: number;
}

/** Options for {@link stopGroup}. */
export interface StopGroupOptions {
  /** Time between SIGTERM and SIGKILL. Default 5000. */
  readonly graceMs?: number;
  /** How long to wait for the group to vanish after SIGKILL before giving up. Default 5000. */
  readonly killWaitMs?: number;
  /** Poll interval of the "is the group gone" check. Default 50. */
  readonly pollMs?: number;
}

/**
 * Refuses pgids that would address something other than one group we
 * spawned: `kill(-1)` signals every process we may signal, `kill(-0)` our own group.
 */
function assertSpawnedPgid(pgid: number): void {
  if (!Number.isInteger(pgid) || pgid <= 1 || pgid === process.pid) {
    throw new Error(`refusing to signal process group ${String(pgid)}`);
  }
}

/** Guard process per pgid (see guard-script.ts); ours to end once the group is gone. */
const guards = new Map<number, ChildProcess>();

function spawnGuard(pgid: number, graceMs: number, logFd: number): void {
  const guard = spawn(process.execPath, ['-e', GUARD_SCRIPT, String(pgid), String(graceMs)], {
    detached: true,
    stdio: ['pipe', logFd, logFd],
  });
  if (guard.pid === undefined) return; // spawn failed; the in-process handlers remain
  guards.set(pgid, guard);
  guard.once('exit', () => {
    if (guards.get(pgid) === guard) guards.delete(pgid);
  });
  // The pipe only exists so the guard notices our death; never write to it.
  if (guard.stdin instanceof net.Socket) guard.stdin.unref();
  guard.unref();
}

/** Ends the guard of a group that is gone (it would also notice within 250 ms). */
function releaseGuard(pgid: number, signal: NodeJS.Signals): void {
  const guard = guards.get(pgid);
  guards.delete(pgid);
  // Only while not yet reaped: after that its pid may belong to someone else.
  if (guard !== undefined && guard.exitCode === null && guard.signalCode === null) guard.kill(signal);
}

/**
 * Spawns `command args...` detached: it becomes a session and process-group
 * leader (pgid = its pid), stdout/stderr appended to `opts.logFile`, plus a
 * guard process that stops the group if this process dies without doing so.
 * Nothing of it keeps the event loop alive.
 */
export function spawnGroup(command: string, args: readonly string[], opts: SpawnGroupOptions): GroupProcess {
  const logFd = fs.openSync(opts.logFile, 'a');
  try {
    const child = spawn(command, args, {
      detached: true,
      stdio: ['ignore', logFd, logFd],
      env: opts.env ?? process.env,
    });
    const pgid = child.pid;
    if (pgid === undefined) {
      child.once('error', () => undefined); // reported by the throw below
      throw new Error(`could not spawn ${command}`);
    }
    const exited = new Promise<ExitInfo>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
    });
    child.unref();
    spawnGuard(pgid, opts.orphanGraceMs ?? 5000, logFd);
    return { pgid, exited };
  } finally {
    // The children have their own copies of the descriptor.
    fs.closeSync(logFd);
  }
}

/** True while any process of the group exists (zombies included). */
export function isGroupAlive(pgid: number): boolean {
  assertSpawnedPgid(pgid);
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') return false;
    if (code === 'EPERM') return true; // exists, just not ours to signal
    throw err;
  }
}

/** Sends `signal` to the group; false if it no longer exists. */
function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  assertSpawnedPgid(pgid);
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}

async function waitGone(pgid: number, timeoutMs: number, pollMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isGroupAlive(pgid)) {
    if (Date.now() >= deadline) return false;
    await new Promise<void>((resolve) => setTimeout(resolve, pollMs));
  }
  return true;
}

/**
 * Stops a group started by {@link spawnGroup}: SIGTERM to the whole group,
 * wait until it is gone, SIGKILL after `graceMs`. Resolves once no process
 * of the group exists; rejects if it survives SIGKILL for `killWaitMs`
 * (only possible when zombies are not reaped, e.g. a container without init).
 */
export async function stopGroup(pgid: number, opts: StopGroupOptions = {}): Promise<void> {
  const { graceMs = 5000, killWaitMs = 5000, pollMs = 50 } = opts;
  const gone = (): void => releaseGuard(pgid, 'SIGTERM');
  if (!signalGroup(pgid, 'SIGTERM')) return gone();
  if (await waitGone(pgid, graceMs, pollMs)) return gone();
  signalGroup(pgid, 'SIGKILL');
  if (await waitGone(pgid, killWaitMs, pollMs)) return gone();
  throw new Error(`process group ${pgid} still exists ${killWaitMs} ms after SIGKILL (unreaped zombies?)`);
}

/** SIGKILLs the group synchronously; for 'exit' handlers, where nothing async runs. */
export function killGroupSync(pgid: number): void {
  signalGroup(pgid, 'SIGKILL');
  releaseGuard(pgid, 'SIGKILL');
}
