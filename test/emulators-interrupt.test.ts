/**
 * The harness stops exactly what it started also when its process is
 * interrupted (Ctrl-C) or killed outright (SIGKILL: no handler runs; the
 * guard process notices the closed pipe and stops the groups). Runs the
 * real command line front end with the real emulators.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { connectResult } from './support/net';
import { waitFor } from './support/wait';

jest.setTimeout(180_000);

const CLI = path.join(__dirname, '..', 'tools', 'emulators', 'cli.ts');

/** Processes whose command line names `host` (gcloud: --host-port=ip:port; the emulator JVMs: --port=port). */
function processesServing(host: string): number[] {
  const port = host.split(':')[1] ?? '';
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline: string;
    try {
      cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
    } catch {
      continue; // gone meanwhile
    }
    if (
      cmdline.includes(`--host-port=${host}`) ||
      (cmdline.includes('emulator') && cmdline.includes(`--port=${port} `))
    )
      found.push(Number(entry));
  }
  return found;
}

/** Starts `cli.ts start` in a session of its own and resolves with the hosts it exports. */
async function startCli(): Promise<{ child: ChildProcess; hosts: string[] }> {
  const env = { ...process.env };
  delete env.FIRESTORE_EMULATOR_HOST;
  delete env.PUBSUB_EMULATOR_HOST;
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'start'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString('utf8');
  });
  child.stderr.resume();
  const hosts = await waitFor(
    'the export lines of cli.ts start',
    async () => {
      const found = [...out.matchAll(/^export (?:FIRESTORE|PUBSUB)_EMULATOR_HOST=(\S+)$/gm)].map((m) => m[1] ?? '');
      return found.length === 2 ? found : undefined;
    },
    { timeoutMs: 150_000, everyMs: 100 },
  );
  return { child, hosts };
}

async function expectAllGone(hosts: readonly string[]): Promise<void> {
  for (const host of hosts) {
    await waitFor(
      `nothing serving ${host}`,
      async () =>
        (await connectResult(host)) === 'ECONNREFUSED' && processesServing(host).length === 0 ? true : undefined,
      { timeoutMs: 30_000, everyMs: 100 },
    );
  }
}

describe('the emulator harness after an interruption', () => {
  test.each([
    ['Ctrl-C (SIGINT): its handler stops both emulators and it exits 0', 'SIGINT' as const, 0],
    ['SIGKILL: no handler runs; the guard processes stop both emulators', 'SIGKILL' as const, null],
  ])('%s', async (_name, signal, exitCode) => {
    const { child, hosts } = await startCli();
    for (const host of hosts) {
      await expect(connectResult(host)).resolves.toBe('connected');
      expect(processesServing(host).length).toBeGreaterThan(0);
    }
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill(signal);
    await expect(exited).resolves.toBe(exitCode);
    await expectAllGone(hosts);
  });
});
