/** Shared by the infra tests: the deploy script, its fake tools, and parsing of what it prints. */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

let dir: string | undefined;
/** A temporary directory per test file, removed after it (call useSandbox() at the top of the file). */
export const sandbox = (): string => (dir ??= mkdtempSync(join(tmpdir(), 'infra-test-')));
export function useSandbox(): void {
  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });
}

export const ROOT = join(__dirname, '..', '..');
export const SCRIPT = join(ROOT, 'infra', 'deploy.sh');
export const MONITORING = join(ROOT, 'infra', 'monitoring');
export const PROJECT = 'demo-proj';
export const REGION = 'europe-west1';
export const FUNCTIONS = ['receivePubSubPush', 'receiveDeadLetter', 'startProcess', 'runJob', 'fireTimer', 'sweepJobs', 'relayInbox', 'inboxConsole'] as const;
export const sa = (name: string): string => `${name}@${PROJECT}.iam.gserviceaccount.com`;
export const PUBSUB_AGENT = 'serviceAccount:service-PROJECT_NUMBER@gcp-sa-pubsub.iam.gserviceaccount.com';

export interface IndexField {
  fieldPath: string;
  order?: string;
  arrayConfig?: string;
}
export interface IndexesFile {
  indexes: { collectionGroup: string; queryScope: string; fields: IndexField[] }[];
  fieldOverrides: { collectionGroup: string; fieldPath: string; ttl?: boolean; indexes: unknown[] }[];
}
export const INDEXES = JSON.parse(readFileSync(join(ROOT, 'firestore.indexes.json'), 'utf8')) as IndexesFile;
/** The fields with a TTL policy: every field override with "ttl": true (what both deploy paths read). */
export const TTL_FIELDS = INDEXES.fieldOverrides.filter((o) => o.ttl === true);


/** A directory with fake gcloud, firebase and curl that leave a marker when called, first on PATH. */
export function fakeTools(): { bin: string; marker: string } {
  const bin = mkdtempSync(join(sandbox(), 'bin-'));
  const marker = join(bin, 'CALLED');
  for (const tool of ['gcloud', 'firebase', 'curl']) {
    writeFileSync(join(bin, tool), `#!/bin/sh\necho "${tool} $*" >> '${marker}'\nexit 1\n`);
    chmodSync(join(bin, tool), 0o755);
  }
  return { bin, marker };
}

export function deploy(args: readonly string[], env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  const { bin } = fakeTools();
  return spawnSync('bash', [SCRIPT, ...args], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, PATH: `${bin}:${process.env.PATH ?? ''}`, ...env }, timeout: 60_000 });
}

/** How a printed Firebase Rules API call gets its token: piped into curl's stdin (`-H @-`), never an argument. */
export const RULES_AUTH = "gcloud auth print-access-token | sed 's/^/Authorization: Bearer /' | ";

/** Printed commands ("+ gcloud ..." lines, without the "+ "). */
export const commandsOf = (stdout: string): string[] => stdout.split('\n').filter((l) => l.startsWith('+ ')).map((l) => l.slice(2));

/** The value of --flag=VALUE in a printed command (unquoted). */
export function flag(command: string, name: string): string | undefined {
  const match = new RegExp(`(?:^| )'?--${name}=([^' ]+|[^']*)'?(?= |$)`).exec(command);
  return match?.[1];
}

/** The --set-env-vars of a deploy command, which joins its pairs with "|" after gcloud's "^|^" prefix. */
export function envOf(command: string): Record<string, string> {
  const value = flag(command, 'set-env-vars') ?? '';
  if (!value.startsWith('^|^')) throw new Error(`--set-env-vars does not start with gcloud's ^|^ delimiter: ${value.slice(0, 80)}`);
  return Object.fromEntries(value.slice(3).split('|').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
}

export function only(commands: readonly string[], predicate: (c: string) => boolean, what: string): string {
  const found = commands.filter(predicate);
  if (found.length !== 1) throw new Error(`expected exactly one ${what}, found ${found.length}:\n${found.join('\n')}`);
  return found[0] as string;
}

export function jsonFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? jsonFiles(join(dir, e.name)) : e.name.endsWith('.json') ? [join(dir, e.name)] : []));
}
