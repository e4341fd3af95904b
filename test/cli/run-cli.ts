import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { runCli } from '../../functions/src/cli/main';
import { FIXTURE_ENV } from '../support/app';

export interface CliRun {
  code: number;
  out: string;
  err: string;
  json: () => unknown;
}

/** A stream that says it is a terminal, and what was drawn on it. */
export function fakeTerminal(): { stream: PassThrough & { isTTY: boolean }; drawn: () => string } {
  const stream = Object.assign(new PassThrough(), { isTTY: true, columns: 80 });
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, drawn: () => Buffer.concat(chunks).toString('utf8') };
}

/**
 * Runs the CLI in process, as `inbox ARGS`, against one project on the emulator, with the fixture app
 * (INBOX_APP=test/fixtures/app); nobody answers questions. `env`: more of the configuration (e.g.
 * INBOX_BPMN_DIR for other deployed models).
 */
export function cliFor(
  projectId: string,
  progress?: NodeJS.WritableStream & { isTTY?: boolean },
  env: NodeJS.ProcessEnv = {},
): (...args: string[]) => Promise<CliRun> {
  return async (...args) => {
    const out: string[] = [];
    const err: string[] = [];
    const io = {
      out: (t: string) => out.push(t),
      err: (t: string) => err.push(t),
      confirm: async () => false,
      ...(progress === undefined ? {} : { progress }),
    };
    const code = await runCli(args, io, { ...process.env, ...FIXTURE_ENV, ...env, GOOGLE_CLOUD_PROJECT: projectId });
    return { code, out: out.join('\n'), err: err.join('\n'), json: () => JSON.parse(out.join('\n')) as unknown };
  };
}

/** Where `npm run build` puts the CLI (package.json bin); tests that spawn it need a build first (npm test builds). */
export const BUILT_CLI = join(__dirname, '..', '..', 'dist', 'cli', 'main.js');

/**
 * Runs the built CLI as its own process, as an operator does (`npx inbox ARGS`),
 * with exactly `env` (nothing inherited) and the fixture app unless `env` names
 * an INBOX_APP: what it prints and its exit code.
 */
export function spawnCli(env: NodeJS.ProcessEnv): (...args: string[]) => Promise<CliRun> {
  return (...args) =>
    new Promise((resolve, reject) => {
      execFile(
        process.execPath,
        [BUILT_CLI, ...args],
        { env: { ...FIXTURE_ENV, ...env }, timeout: 60_000 },
        (error, stdout, stderr) => {
          const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
          if (code === null) {
            reject(
              new Error(`inbox ${args.join(' ')} did not exit by itself (${error?.message ?? ''}); stderr: ${stderr}`),
            );
            return;
          }
          resolve({ code, out: stdout.trimEnd(), err: stderr.trimEnd(), json: () => JSON.parse(stdout) as unknown });
        },
      );
    });
}
