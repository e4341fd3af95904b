/**
 * Runs the storage emulator until Ctrl-C / SIGTERM.
 *
 *   npx storage-emulator [--port=N] [--bucket=NAME ...] [--quiet]
 *
 * Prints `STORAGE_EMULATOR_HOST=http://127.0.0.1:PORT` on stdout, the buckets
 * it created on stderr; requests are logged on stderr unless --quiet. Exit
 * codes: 0 after a signal, 2 usage error, 1 start failure (port in use, a bad
 * bucket name).
 */
import { startStorageEmulator } from './emulator';

const USAGE = 'usage: storage-emulator [--port=N] [--bucket=NAME ...] [--quiet]';

/** What the command line asks for. */
export interface CliArgs {
  readonly port: number;
  readonly buckets: readonly string[];
  readonly quiet: boolean;
}

/** Parses the arguments; undefined on anything it does not know (the caller prints the usage). */
export function parseArgs(argv: readonly string[]): CliArgs | undefined {
  let port = 0;
  let quiet = false;
  const buckets: string[] = [];
  for (const arg of argv) {
    const [flag, ...rest] = arg.split('=');
    const value = rest.join('=');
    if (arg === '--quiet') quiet = true;
    else if (flag === '--port' && /^\d{1,5}$/.test(value) && Number(value) <= 65535) port = Number(value);
    else if (flag === '--bucket' && value !== '') buckets.push(value);
    else return undefined;
  }
  return { port, buckets, quiet };
}

/** Runs the CLI until a signal; resolves with the exit code. */
export async function runCli(argv: readonly string[]): Promise<number> {
  const args = parseArgs(argv);
  if (args === undefined) {
    console.error(USAGE);
    return 2;
  }
  const emulator = await startStorageEmulator({
    port: args.port,
    buckets: args.buckets,
    ...(args.quiet ? {} : { log: (line: string) => console.error(`# ${new Date().toISOString()} ${line}`) }),
  });
  console.log(`STORAGE_EMULATOR_HOST=${emulator.url}`);
  for (const name of emulator.buckets()) console.error(`# created bucket ${name}`);
  console.error('# storage emulator ready; Ctrl-C stops it');
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  console.error(`# ${signal}: stopping`);
  await emulator.stop();
  return 0;
}

/** Runs {@link runCli} as the process: exits with its code, or 1 with the message of a start failure. */
export function runCliAsProcess(argv: readonly string[]): void {
  runCli(argv).then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : String(err));
      process.exit(1);
    },
  );
}

if (require.main === module) runCliAsProcess(process.argv.slice(2));
