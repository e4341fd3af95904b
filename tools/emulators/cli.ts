/**
 * Command line front end of the emulator harness.
 *
 *   npx tsx tools/emulators/cli.ts start
 *     Starts Firestore and Pub/Sub emulators, prints `export ...` lines for
 *     their hosts on stdout, runs until Ctrl-C / SIGTERM, stops them, exits 0.
 *
 *   npx tsx tools/emulators/cli.ts run -- <command> [args...]
 *     Starts both, runs the command with FIRESTORE_EMULATOR_HOST and
 *     PUBSUB_EMULATOR_HOST set (stdio inherited), stops the emulators when it
 *     ends (also on failure or Ctrl-C) and exits with the command's exit code.
 *
 * Exit codes of the CLI itself: 2 usage error, 1 emulators failed to start
 * (the message says what to install if they cannot run here), 127 command not found.
 */
import { spawn } from 'node:child_process';
import * as os from 'node:os';
import { startEmulators, type RunningEmulators } from './harness';
import { errorMessage } from '../../functions/src/core/errors';

const USAGE = `usage: npx tsx tools/emulators/cli.ts start
       npx tsx tools/emulators/cli.ts run -- <command> [args...]`;

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM'];

/** Calls `handler` on SIGINT/SIGTERM until the returned function is called. */
function onSignals(handler: (signal: NodeJS.Signals) => void): () => void {
  // `on`, not `once`: while we listen, the harness's own handler sees another
  // listener and leaves exiting to us (see cleanup.ts).
  for (const s of SIGNALS) process.on(s, handler);
  return () => {
    for (const s of SIGNALS) process.off(s, handler);
  };
}

function exportLines(running: RunningEmulators): string {
  return Object.entries(running.env)
    .map(([name, value]) => `export ${name}=${value}`)
    .join('\n');
}

async function start(): Promise<number> {
  const running = await startEmulators();
  console.log(exportLines(running));
  console.error(
    `# emulators ready (logs: ${running.firestore?.logFile ?? ''} ${running.pubsub?.logFile ?? ''}); Ctrl-C stops them`,
  );
  // Signal listeners do not keep Node running; this timer does, until a signal.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  let off = (): void => undefined;
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    off = onSignals(resolve);
  });
  clearInterval(keepAlive);
  console.error(`# ${signal}: stopping emulators`);
  try {
    await running.stop();
  } finally {
    // Only now: until we are done, the harness's handler must not exit for us.
    off();
  }
  return 0;
}

async function run(command: string, args: readonly string[]): Promise<number> {
  const running = await startEmulators();
  const child = spawn(command, args, { stdio: 'inherit', env: { ...process.env, ...running.env } });
  // A terminal Ctrl-C reaches the command directly (same process group); a
  // signal sent to this process alone (CI timeout, kill) must be passed on.
  const off = onSignals((s) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(s);
  });
  const code = await new Promise<number>((resolve) => {
    child.once('error', (err) => {
      console.error(`cannot run ${command}: ${err.message}`);
      resolve(127);
    });
    child.once('exit', (exitCode, signal) => {
      resolve(exitCode ?? 128 + (signal === null ? 0 : os.constants.signals[signal]));
    });
  });
  try {
    await running.stop();
  } finally {
    off();
  }
  return code;
}

async function main(argv: readonly string[]): Promise<number> {
  const [mode, ...rest] = argv;
  if (mode === 'start' && rest.length === 0) return start();
  if (mode === 'run') {
    const [command, ...args] = rest[0] === '--' ? rest.slice(1) : rest;
    if (command !== undefined) return run(command, args);
  }
  console.error(USAGE);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(errorMessage(err));
    process.exit(1);
  },
);
