import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { emulatorClient, parseArgs, startCloudTasksEmulator } from '../src';
import { PARENT, uniqueQueue, waitFor } from './helpers';

/** Queues created at start, and the CLI as `npx cloud-tasks-emulator` runs it (the package's bin). */
jest.setTimeout(60_000);

const BIN = join(__dirname, '..', 'bin', 'cloud-tasks-emulator.js');

interface Cli {
  readonly child: ChildProcess;
  readonly out: { stdout: string; stderr: string };
  exited(): Promise<number | null>;
}

/** Waits for the CLI's ready line; a CLI that exits or stays silent instead fails the test with all it printed. */
async function ready(cli: Cli): Promise<void> {
  const gone = (): boolean => cli.child.exitCode !== null || cli.child.signalCode !== null;
  await waitFor(() => cli.out.stderr.includes('ready') || gone(), 'the CLI to be ready', 30_000).catch(
    (err: unknown) => {
      throw new Error(`${err instanceof Error ? err.message : String(err)}; it printed ${JSON.stringify(cli.out)}`);
    },
  );
  if (!cli.out.stderr.includes('ready'))
    throw new Error(
      `the CLI ended (exit ${cli.child.exitCode}, signal ${cli.child.signalCode}) before it was ready; it printed ${JSON.stringify(cli.out)}`,
    );
}

/** Every CLI a test started: one a failed test leaves running is stopped after it, so the run ends. */
const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

function startCli(args: readonly string[]): Cli {
  const child = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(child);
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (c: Buffer) => (out.stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (out.stderr += c.toString('utf8')));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, out, exited: () => exit };
}

/** The value of `KEY=value` on the CLI's stdout. */
const printed = (cli: Cli, key: string): string | undefined =>
  new RegExp(`^${key}=(\\S+)$`, 'm').exec(cli.out.stdout)?.[1];

test('queues given at start exist at once, with their settings, as CreateQueue would make them', async () => {
  const jobs = uniqueQueue('jobs');
  const relay = uniqueQueue('relay');
  const emulator = await startCloudTasksEmulator({
    queues: [{ name: jobs, retryConfig: { maxAttempts: 7 } }, { name: relay }],
  });
  const client = emulatorClient(emulator.host);
  try {
    expect(emulator.createdQueues).toEqual([jobs, relay]);
    const [queues] = await client.listQueues({ parent: PARENT });
    expect(queues.map((q) => [q.name, q.retryConfig?.maxAttempts])).toEqual(
      [jobs, relay].sort().map((n) => [n, n === jobs ? 7 : 100]),
    );
  } finally {
    await client.close();
    await emulator.stop();
  }
});

test('a queue the API would refuse stops the start with its reason', async () => {
  // An emulator that starts anyway is stopped, or its server would keep the test run alive.
  const outcome = await startCloudTasksEmulator({ queues: [{ name: `${PARENT}/queues/not_valid` }] }).then(
    async (emulator) => emulator.stop().then(() => 'started'),
    (err: unknown) => (err instanceof Error ? err.message : String(err)),
  );
  expect(outcome).toMatch(/^Invalid queue name/);
});

test('the CLI creates the --queue queues, says so, prints where it is, and stops on SIGTERM', async () => {
  const queue = uniqueQueue('cli');
  const cli = startCli([`--queue=${queue}`, '--quiet']);
  try {
    await ready(cli);
    expect(cli.out.stderr).toContain(`# created queue ${queue}\n`);
    expect(cli.out.stderr).not.toContain('no queues');
    const host = printed(cli, 'CLOUD_TASKS_EMULATOR_HOST') ?? '';
    expect(printed(cli, 'CLOUD_TASKS_EMULATOR_OIDC_CERTS_URL')).toMatch(
      /^http:\/\/127\.0\.0\.1:\d+\/oauth2\/v1\/certs$/,
    );
    const client = emulatorClient(host);
    try {
      const [found] = await client.getQueue({ name: queue });
      expect(found.state).toBe('RUNNING');
    } finally {
      await client.close();
    }
  } finally {
    cli.child.kill('SIGTERM');
  }
  expect(await cli.exited()).toBe(0);
});

test('started without queues, the CLI says that CreateTask will answer NOT_FOUND', async () => {
  const cli = startCli(['--quiet']);
  try {
    await ready(cli);
    expect(cli.out.stderr).toContain('# no queues: CreateTask answers NOT_FOUND');
  } finally {
    cli.child.kill('SIGTERM');
  }
  expect(await cli.exited()).toBe(0);
});

test('the CLI refuses what it does not know with its usage (exit 2), and a bad queue name with its reason (exit 1)', async () => {
  expect(parseArgs(['--port=8123', '--queue=a', '--queue=b', '--oidc-issuer=https://x.test', '--oidc-port=0'])).toEqual(
    {
      port: 8123,
      queues: ['a', 'b'],
      issuer: 'https://x.test',
      oidcPort: 0,
      quiet: false,
    },
  );
  for (const bad of [['--port=70000'], ['--queue='], ['--queues=a'], ['extra']]) expect(parseArgs(bad)).toBeUndefined();
  const usage = startCli(['--nope']);
  expect(await usage.exited()).toBe(2);
  expect(usage.out.stderr).toContain('usage: cloud-tasks-emulator');
  const invalid = startCli(['--queue=q']);
  expect(await invalid.exited()).toBe(1);
  expect(invalid.out.stderr).toContain('Invalid queue name "q"');
});
