/**
 * Runs the Cloud Tasks emulator until Ctrl-C / SIGTERM.
 *
 *   npx tsx packages/cloud-tasks-emulator/src/cli.ts [--port=N] [--quiet]
 *
 * Prints `CLOUD_TASKS_EMULATOR_HOST=127.0.0.1:PORT` on stdout; RPCs and
 * dispatch attempts are logged on stderr unless --quiet. Exit codes: 0 after
 * a signal, 2 usage error, 1 start failure (e.g. port in use).
 */
import { startCloudTasksEmulator } from './emulator';

const USAGE = 'usage: npx tsx packages/cloud-tasks-emulator/src/cli.ts [--port=N] [--quiet]';

function parseArgs(argv: readonly string[]): { port: number; quiet: boolean } | undefined {
  let port = 0;
  let quiet = false;
  for (const arg of argv) {
    const m = /^--port=(\d+)$/.exec(arg);
    if (m?.[1] !== undefined && Number(m[1]) <= 65535) port = Number(m[1]);
    else if (arg === '--quiet') quiet = true;
    else return undefined;
  }
  return { port, quiet };
}

async function main(argv: readonly string[]): Promise<number> {
  const args = parseArgs(argv);
  if (args === undefined) {
    console.error(USAGE);
    return 2;
  }
  const emulator = await startCloudTasksEmulator({
    port: args.port,
    log: args.quiet ? undefined : (line) => console.error(`# ${new Date().toISOString()} ${line}`),
  });
  console.log(`CLOUD_TASKS_EMULATOR_HOST=${emulator.host}`);
  console.error('# cloud tasks emulator ready; Ctrl-C stops it');
  // The emulator's own timers are unref'd on purpose; this keeps the CLI up until a signal.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  clearInterval(keepAlive);
  console.error(`# ${signal}: stopping`);
  await emulator.stop();
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
