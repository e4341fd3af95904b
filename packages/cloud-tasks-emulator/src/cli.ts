/**
 * Runs the Cloud Tasks emulator until Ctrl-C / SIGTERM.
 *
 *   npx cloud-tasks-emulator [--port=N] [--queue=projects/P/locations/L/queues/Q ...]
 *                            [--oidc-issuer=ISSUER] [--oidc-port=N] [--quiet]
 *
 * (or `npx tsx packages/cloud-tasks-emulator/src/cli.ts ...`). Prints
 * `CLOUD_TASKS_EMULATOR_HOST=127.0.0.1:PORT` and the OIDC issuer and key
 * URLs on stdout, the queues it created (or that it has none) on stderr;
 * RPCs and dispatch attempts are logged on stderr unless --quiet. Exit
 * codes: 0 after a signal, 2 usage error, 1 start failure (port in use, a
 * bad queue name).
 */
import { startCloudTasksEmulator, type CloudTasksEmulator } from './emulator';
import type { QueueMsg } from './messages';

const USAGE =
  'usage: cloud-tasks-emulator [--port=N] [--queue=projects/P/locations/L/queues/Q ...] [--oidc-issuer=ISSUER] [--oidc-port=N] [--quiet]';

/** What the command line asks for. */
export interface CliArgs {
  readonly port: number;
  readonly queues: readonly string[];
  readonly issuer?: string;
  readonly oidcPort: number;
  readonly quiet: boolean;
}

const portOf = (value: string): number | undefined =>
  /^\d{1,5}$/.test(value) && Number(value) <= 65535 ? Number(value) : undefined;

/** Parses the arguments; undefined on anything it does not know (the caller prints the usage). */
export function parseArgs(argv: readonly string[]): CliArgs | undefined {
  let port = 0;
  let oidcPort = 0;
  let issuer: string | undefined;
  let quiet = false;
  const queues: string[] = [];
  for (const arg of argv) {
    const [flag, ...rest] = arg.split('=');
    const value = rest.join('=');
    if (arg === '--quiet') quiet = true;
    else if (flag === '--port' && portOf(value) !== undefined) port = portOf(value) ?? 0;
    else if (flag === '--oidc-port' && portOf(value) !== undefined) oidcPort = portOf(value) ?? 0;
    else if (flag === '--oidc-issuer' && value !== '') issuer = value;
    else if (flag === '--queue' && value !== '') queues.push(value);
    else return undefined;
  }
  return { port, queues, oidcPort, quiet, ...(issuer === undefined ? {} : { issuer }) };
}

/** What a wrapper (the project's `npm run tasks-emulator`) adds to the command line. */
export interface CliExtras {
  /** Queues to create besides the --queue ones, with settings (retry, rate) a flag cannot carry. */
  readonly queues?: readonly QueueMsg[];
  /** Called once the emulator answers, e.g. to print the settings that point a program at it. */
  readonly started?: (emulator: CloudTasksEmulator) => void;
}

/** Runs the CLI until a signal; resolves with the exit code. */
export async function runCli(argv: readonly string[], extras: CliExtras = {}): Promise<number> {
  const args = parseArgs(argv);
  if (args === undefined) {
    console.error(USAGE);
    return 2;
  }
  // The emulator's own timers and servers are unref'd on purpose; this keeps the CLI up, from its start
  // (while the key server is already unref'd and the gRPC server not yet bound) until a signal.
  const keepAlive = setInterval(() => undefined, 1 << 30);
  const emulator = await startCloudTasksEmulator({
    port: args.port,
    oidc: { port: args.oidcPort, ...(args.issuer === undefined ? {} : { issuer: args.issuer }) },
    queues: [...args.queues.map((name) => ({ name })), ...(extras.queues ?? [])],
    ...(args.quiet ? {} : { log: (line: string) => console.error(`# ${new Date().toISOString()} ${line}`) }),
  }).catch((err: unknown) => {
    clearInterval(keepAlive);
    throw err;
  });
  console.log(`CLOUD_TASKS_EMULATOR_HOST=${emulator.host}`);
  console.log(`CLOUD_TASKS_EMULATOR_OIDC_ISSUER=${emulator.oidc.issuer}`);
  console.log(`CLOUD_TASKS_EMULATOR_OIDC_CERTS_URL=${emulator.oidc.certsUrl}`);
  for (const name of emulator.createdQueues) console.error(`# created queue ${name}`);
  if (emulator.createdQueues.length === 0) {
    console.error(
      '# no queues: CreateTask answers NOT_FOUND until a client creates one (CreateQueue), or start with --queue=projects/P/locations/L/queues/Q',
    );
  }
  extras.started?.(emulator);
  console.error('# cloud tasks emulator ready; Ctrl-C stops it');
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  clearInterval(keepAlive);
  console.error(`# ${signal}: stopping`);
  await emulator.stop();
  return 0;
}

/** Runs {@link runCli} as the process: exits with its code, or 1 with the message of a start failure. */
export function runCliAsProcess(argv: readonly string[], extras?: CliExtras): void {
  runCli(argv, extras).then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : String(err));
      process.exit(1);
    },
  );
}

if (require.main === module) runCliAsProcess(process.argv.slice(2));
