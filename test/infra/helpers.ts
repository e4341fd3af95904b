/** Shared by the infra tests: the deploy script, its fake tools, and parsing of what it prints. */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppTopology } from '../../functions/src/apps/topology';

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
export const FUNCTIONS = [
  'receivePubSubPush',
  'receiveDeadLetter',
  'startProcess',
  'runJob',
  'fireTimer',
  'sweepJobs',
  'relayInbox',
  'inboxConsole',
] as const;
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

/**
 * This process's environment for a deploy.sh run, without INBOX_APP (the
 * tests say which app they deploy: --app, or INBOX_APP in `env`).
 */
export function deployEnv(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const inherited = { ...process.env };
  delete inherited.INBOX_APP;
  return { ...inherited, ...env };
}

export function deploy(args: readonly string[], env: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  const { bin } = fakeTools();
  return spawnSync('bash', [SCRIPT, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: deployEnv({ PATH: `${bin}:${process.env.PATH ?? ''}`, ...env }),
    timeout: 60_000,
  });
}

/** The app deploy.sh runs without --app and INBOX_APP (the CLI's default). */
export const DEFAULT_APP = 'examples/work-orders';
/** The second example (docs/your-own-process.md): deployed with --app. */
export const CLAIMS_APP = 'examples/claims';
/** The deployment tests' own app: names shared with no example, one subscription named (not TOPIC-push) and holding a dot. */
export const FIXTURE_APP = 'test/fixtures/apps/minimal';
/** An app whose model has an async task its steps do not handle: the check refuses it. */
export const BROKEN_APP = 'test/fixtures/apps/no-handler';
/** An app two of whose three models do not load (a call activity, a complex gateway). */
export const REFUSED_MODELS_APP = 'test/fixtures/apps/refused-models';

/** What `inbox --json app` prints, as far as the infra tests read it. */
export interface AppView {
  readonly app: string;
  readonly folder: string;
  readonly topology: AppTopology;
}

/**
 * The app in `folder` as deploy.sh reads it: `inbox --json app` from
 * source (tsx), with the JSON also written to a file (for json-tool).
 */
export function appView(folder: string): AppView & { readonly file: string } {
  const run = spawnSync(
    join(ROOT, 'node_modules', '.bin', 'tsx'),
    [join(ROOT, 'functions', 'src', 'cli', 'main.ts'), '--json', 'app'],
    { cwd: ROOT, encoding: 'utf8', env: deployEnv({ INBOX_APP: folder }), timeout: 60_000 },
  );
  if (run.status !== 0) throw new Error(`inbox --json app for ${folder} failed (${String(run.status)}): ${run.stderr}`);
  const file = join(sandbox(), `app-${folder.replace(/\W+/g, '-')}.json`);
  writeFileSync(file, run.stdout);
  return { ...(JSON.parse(run.stdout) as AppView), file };
}

/** Every subscription of an app's topology: the inbound push subscriptions, then the dead-letter one. */
export const subscriptionsOf = (t: AppTopology): string[] => [
  ...t.inbound.map((i) => i.subscription),
  t.deadLetter.subscription,
];
/** Every topic of an app's topology, once each: inbound, dead-letter, published to. */
export const topicsOf = (t: AppTopology): string[] => [
  ...new Set([...t.inbound.map((i) => i.topic), t.deadLetter.topic, ...t.publishes]),
];
/** Where deploy.sh writes the upload's ignore file of the app in `folder`. */
export const uploadIgnoreFile = (folder: string): string => `infra/.generated/upload/${folder}.gcloudignore`;

/** How a printed Firebase Rules API call gets its token: piped into curl's stdin (`-H @-`), never an argument. */
export const RULES_AUTH = "gcloud auth print-access-token | sed 's/^/Authorization: Bearer /' | ";

/** Printed commands ("+ gcloud ..." lines, without the "+ "). */
export const commandsOf = (stdout: string): string[] =>
  stdout
    .split('\n')
    .filter((l) => l.startsWith('+ '))
    .map((l) => l.slice(2));

/** The value of --flag=VALUE in a printed command (unquoted). */
export function flag(command: string, name: string): string | undefined {
  const match = new RegExp(`(?:^| )'?--${name}=([^' ]+|[^']*)'?(?= |$)`).exec(command);
  return match?.[1];
}

/** The --set-env-vars of a deploy command, which joins its pairs with "|" after gcloud's "^|^" prefix. */
export function envOf(command: string): Record<string, string> {
  const value = flag(command, 'set-env-vars') ?? '';
  if (!value.startsWith('^|^'))
    throw new Error(`--set-env-vars does not start with gcloud's ^|^ delimiter: ${value.slice(0, 80)}`);
  return Object.fromEntries(
    value
      .slice(3)
      .split('|')
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
}

export function only(commands: readonly string[], predicate: (c: string) => boolean, what: string): string {
  const found = commands.filter(predicate);
  if (found.length !== 1) throw new Error(`expected exactly one ${what}, found ${found.length}:\n${found.join('\n')}`);
  return found[0] as string;
}

export function jsonFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? jsonFiles(join(dir, e.name)) : e.name.endsWith('.json') ? [join(dir, e.name)] : [],
  );
}
