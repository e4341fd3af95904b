import { PassThrough } from 'node:stream';
import { runCli } from '../../functions/src/cli/main';

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

/** Runs the CLI in process, as `inbox ARGS`, against one project on the emulator; nobody answers questions. */
export function cliFor(projectId: string, progress?: NodeJS.WritableStream & { isTTY?: boolean }): (...args: string[]) => Promise<CliRun> {
  return async (...args) => {
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (t: string) => out.push(t), err: (t: string) => err.push(t), confirm: async () => false, ...(progress === undefined ? {} : { progress }) };
    const code = await runCli(args, io, { ...process.env, GOOGLE_CLOUD_PROJECT: projectId });
    return { code, out: out.join('\n'), err: err.join('\n'), json: () => JSON.parse(out.join('\n')) as unknown };
  };
}
