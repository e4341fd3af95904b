/**
 * The deploy, rehearsed: the real `gcloud functions deploy` commands of
 * infra/deploy.sh (taken from its dry run, so this test follows the script),
 * run by the real Google Cloud CLI against a local stand-in of the Cloud
 * Functions API. gcloud's own packaging builds the upload from
 * infra/gcloudignore and its own flag parsing builds the API request; the
 * test then checks the upload, builds it the way the Node.js buildpack does
 * (`npm ci`, `npm run gcp-build` with the build environment gcloud sent,
 * `npm prune --production`) and starts each of the eight functions from
 * that tree with the environment Cloud Run sets plus the one gcloud sent.
 * Twice: for the default app (the work-order example) and for the claims
 * example (--app), each uploaded, bundled and run as the app deploy.sh
 * named. Network: 127.0.0.1 and the npm registry only.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveFunction, type ServedFunction } from '../../tools/local/serve-function';
import {
  type FunctionsApiStandIn,
  type SentFunction,
  startFunctionsApiStandIn,
} from '../support/functions-api-standin';
import { type RealGcloud, realGcloud, requireGcloud } from '../support/real-gcloud';
import {
  appView,
  CLAIMS_APP,
  commandsOf,
  DEFAULT_APP,
  deploy,
  FUNCTIONS,
  PROJECT,
  REGION,
  ROOT,
  sa,
  uploadIgnoreFile,
} from './helpers';

const TOKEN = 'ya29.rehearsal-token';
const APIS = ['cloudfunctions', 'serviceusage', 'cloudresourcemanager', 'run'];
const REFERENCE_BUCKETS = ['sender-a-reports', 'sender-b-reports'];

/**
 * What the build needs, and all the upload may hold: a new file elsewhere must be placed on purpose.
 * Of the app (`appFiles`, its folder's files): its models (`models`, the default app's the top-level bpmn/) and the
 * files its bundle takes, named here.
 */
function expectedUpload(app: string, models: string, appFiles: readonly string[]): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
    );
  // console-ui/: the console page's sources; gcp-build bundles them into dist/console-page/ (Cloud Build makes dist/).
  // tools/build/: gcp-build's app bundler. The app: its index.ts and what it imports (bundled), its models (read at run time).
  return [
    'package.json',
    'package-lock.json',
    'tsconfig.json',
    'tsconfig.build.json',
    ...walk('functions/src'),
    ...walk('console-ui'),
    ...walk('tools/build'),
    ...walk(models),
    ...appFiles.map((f) => join(app, f)),
  ].sort();
}

/** The entries of a zip, by gcloud's archive, read with Python's zipfile (no zip library in the project). */
function zipEntries(zip: Buffer): Array<{ name: string; size: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'zip-'));
  try {
    writeFileSync(join(dir, 'upload.zip'), zip);
    const list = spawnSync(
      'python3',
      [
        '-c',
        'import json,sys,zipfile; print(json.dumps([[i.filename, i.file_size] for i in zipfile.ZipFile(sys.argv[1]).infolist() if not i.is_dir()]))',
        join(dir, 'upload.zip'),
      ],
      { encoding: 'utf8' },
    );
    if (list.status !== 0) throw new Error(`python3 could not read the zip: ${list.stderr}`);
    return (JSON.parse(list.stdout) as Array<[string, number]>).map(([name, size]) => ({ name, size }));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Every `gcloud functions deploy` the dry run prints, in order: on a new
 * project each function is created with placeholder URLs, then updated
 * with the real ones, and a rerun of the script updates again.
 */
function deployCommands(appArgs: readonly string[]): Array<{ fn: string; command: string }> {
  // Two sender buckets: INBOX_REFERENCE_BUCKETS holds a comma, which gcloud must not split on.
  const dry = deploy(['--project', PROJECT, '--region', REGION, '--dry-run', ...appArgs], {
    REFERENCE_BUCKETS: REFERENCE_BUCKETS.join(','),
  });
  if (dry.status !== 0) throw new Error(`deploy.sh --dry-run failed:\n${dry.stderr}`);
  return commandsOf(dry.stdout)
    .filter((c) => c.startsWith('gcloud functions deploy '))
    .map((command) => ({ fn: command.split(' ')[3] ?? '', command }));
}

/** Runs a command the way the Node.js buildpack would, in `dir`, failing with its output. */
function buildStep(dir: string, args: readonly string[], env: Readonly<Record<string, string>>): number {
  const started = Date.now();
  const run = spawnSync('npm', args, {
    cwd: dir,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    timeout: 600_000,
  });
  if (run.status !== 0)
    throw new Error(
      `npm ${args.join(' ')} failed (${run.status ?? run.signal}):\n${run.stdout.slice(-4_000)}\n${run.stderr.slice(-4_000)}`,
    );
  return Date.now() - started;
}

/** The build environment gcloud sent for a function (buildConfig.environmentVariables, from --set-build-env-vars). */
const buildEnvOf = (sent: SentFunction | undefined): Readonly<Record<string, string>> =>
  (sent?.buildConfig as { readonly environmentVariables?: Readonly<Record<string, string>> } | undefined)
    ?.environmentVariables ?? {};

describe.each([
  {
    label: 'the work-order example, the default app',
    app: DEFAULT_APP,
    appArgs: [],
    // The default app's models: the repository's top-level bpmn/ (examples/work-orders/index.ts).
    models: 'bpmn',
    appFiles: ['billing.ts', 'index.ts', 'messages.ts', 'steps.ts'],
  },
  {
    label: 'the claims example, by --app',
    app: CLAIMS_APP,
    appArgs: ['--app', CLAIMS_APP],
    models: join(CLAIMS_APP, 'bpmn'),
    appFiles: ['index.ts', 'messages.ts', 'payout.ts', 'steps.ts'],
  },
])(
  'deploy rehearsal of $label: the real gcloud, a stand-in Cloud Functions API, the upload built and started',
  ({ app, appArgs, models, appFiles }) => {
    let standIn: FunctionsApiStandIn;
    let gcloud: RealGcloud;
    const deployed: Array<{ fn: string; status: number | null; output: string }> = [];

    beforeAll(async () => {
      requireGcloud();
      standIn = await startFunctionsApiStandIn(TOKEN);
      gcloud = realGcloud(standIn.url, TOKEN, APIS);
      for (const { fn, command } of deployCommands(appArgs)) {
        const run = await gcloud.run(command, ROOT);
        deployed.push({ fn, status: run.status, output: `${run.stdout}\n${run.stderr}` });
      }
    }, 300_000);

    afterAll(async () => {
      await standIn.close();
    });

    it('creates, then updates, all eight functions with the script commands; gcloud talks to nothing but the stand-in', () => {
      // Each function twice: created with placeholder URLs, then updated with the real ones (as on a new project).
      expect(deployed.map((d) => d.fn)).toEqual([...FUNCTIONS, ...FUNCTIONS]);
      for (const d of deployed)
        expect({ fn: d.fn, status: d.status, output: d.status === 0 ? '' : d.output }).toEqual({
          fn: d.fn,
          status: 0,
          output: '',
        });
      expect(standIn.unexpected).toEqual([]);
      expect(standIn.calls.filter((c) => c.startsWith('POST ') && c.endsWith('/functions'))).toHaveLength(
        FUNCTIONS.length,
      );
      expect(standIn.calls.filter((c) => c.startsWith('PATCH '))).toHaveLength(FUNCTIONS.length);
      // The update with --no-allow-unauthenticated rewrites each service's invoker policy: never public.
      expect(standIn.runPolicies.size).toBe(FUNCTIONS.length);
      for (const [service, policy] of standIn.runPolicies) {
        for (const b of policy.bindings ?? [])
          expect({ service, members: b.members.filter((m) => m.startsWith('all')) }).toEqual({ service, members: [] });
      }
    });

    it('gives every function the claim-check settings, as gcloud parsed them from --set-env-vars', () => {
      for (const fn of FUNCTIONS) {
        const env = standIn.sent.get(fn)?.serviceConfig?.environmentVariables ?? {};
        expect({ fn, payload: env.INBOX_PAYLOAD_BUCKET, references: env.INBOX_REFERENCE_BUCKETS }).toEqual({
          fn,
          payload: `${PROJECT}-inbox-payloads`,
          references: REFERENCE_BUCKETS.join(','),
        });
        // The rest did not lose its separators either.
        expect(env.INBOX_PUSH_AUDIENCE).toBe(`https://URL_OF_${fn}`);
        // The app it runs.
        expect({ fn, app: env.INBOX_APP }).toEqual({ fn, app });
        // The console has three more: its audiences (a comma list too) and its two lists of users.
        expect(Object.keys(env)).toHaveLength(fn === 'inboxConsole' ? 21 : 18);
      }
      expect(standIn.sent.get('inboxConsole')?.serviceConfig?.environmentVariables?.INBOX_CONSOLE_AUDIENCES).toBe(
        '32555940559.apps.googleusercontent.com,https://URL_OF_inboxConsole',
      );
    });

    it('builds the app the functions run: INBOX_APP is the whole build environment gcloud sent', () => {
      for (const fn of FUNCTIONS)
        expect({ fn, build: buildEnvOf(standIn.sent.get(fn)) }).toEqual({ fn, build: { INBOX_APP: app } });
    });

    it('uploads exactly what the build needs: package files, tsconfigs, functions/src, console-ui/, tools/build/ and of the app its models and code, no node_modules, .git, dist, other apps, tests or tooling', () => {
      const expected = expectedUpload(app, models, appFiles);
      for (const fn of FUNCTIONS) {
        const zip = standIn.zipOf(fn);
        expect({ fn, uploaded: zip !== undefined }).toEqual({ fn, uploaded: true });
        const names = zipEntries(zip as Buffer)
          .map((e) => e.name)
          .sort();
        for (const prefix of ['node_modules/', '.git/', 'dist/', 'test/', `${app}/test/`])
          expect({ fn, prefix, found: names.filter((n) => n.startsWith(prefix)) }).toEqual({ fn, prefix, found: [] });
        expect({ fn, otherApps: names.filter((n) => n.startsWith('examples/') && !n.startsWith(`${app}/`)) }).toEqual({
          fn,
          otherApps: [],
        });
        expect(names).toEqual(expected);
      }
      const entries = zipEntries(standIn.zipOf('receivePubSubPush') as Buffer);
      const unpacked = entries.reduce((sum, e) => sum + e.size, 0);
      console.log(
        `deploy rehearsal (${app}): the upload holds ${entries.length} files, ${unpacked} bytes unpacked, ${(standIn.zipOf('receivePubSubPush') as Buffer).length} bytes zipped`,
      );
    });

    it('sends the Cloud Run settings deploy.sh chose, as gcloud encodes them', () => {
      const settings = Object.fromEntries(
        FUNCTIONS.map((fn) => {
          const service = standIn.sent.get(fn)?.serviceConfig ?? {};
          return [
            fn,
            [
              service.availableMemory,
              service.availableCpu,
              service.maxInstanceRequestConcurrency,
              service.maxInstanceCount,
              service.minInstanceCount ?? 0,
              service.timeoutSeconds,
            ],
          ];
        }),
      );
      // memory, cpu, concurrency, max instances, min instances, timeout s (reasons: infra/lib/functions.sh)
      expect(settings).toEqual({
        receivePubSubPush: ['1Gi', '1', 80, 20, 0, 60],
        receiveDeadLetter: ['1Gi', '1', 20, 5, 0, 60],
        startProcess: ['256Mi', '1', 40, 10, 0, 60],
        runJob: ['512Mi', '1', 20, 10, 0, 120],
        fireTimer: ['256Mi', '1', 20, 10, 0, 60],
        sweepJobs: ['256Mi', '0.167', 1, 1, 0, 60],
        relayInbox: ['512Mi', '1', 10, 10, 0, 120],
        inboxConsole: ['512Mi', '1', 20, 2, 0, 60],
      });
      for (const fn of FUNCTIONS) {
        const sent = standIn.sent.get(fn);
        expect(sent?.buildConfig).toMatchObject({
          runtime: 'nodejs22',
          entryPoint: fn,
          serviceAccount: `projects/${PROJECT}/serviceAccounts/${sa('inbox-build')}`,
        });
        // A Cloud Run rule: more than one request at a time needs a whole vCPU.
        const service = sent?.serviceConfig ?? {};
        if (Number(service.maxInstanceRequestConcurrency) > 1)
          expect(Number(service.availableCpu)).toBeGreaterThanOrEqual(1);
        // A deploy after a rollback by traffic split serves the new revision again.
        expect(service.allTrafficOnLatestRevision).toBe(true);
      }
    });

    it('builds the upload as the Node.js buildpack does, and each function starts from it and answers', async () => {
      const root = mkdtempSync(join(tmpdir(), 'rehearsal-'));
      const workspace = join(root, 'workspace');
      const served: ServedFunction[] = [];
      try {
        writeFileSync(join(root, 'upload.zip'), standIn.zipOf('receivePubSubPush') as Buffer);
        const unzip = spawnSync('python3', ['-m', 'zipfile', '-e', join(root, 'upload.zip'), workspace], {
          encoding: 'utf8',
        });
        expect(unzip.status).toBe(0);
        // The buildpack: with a build script, dependencies are installed with NODE_ENV=development, the
        // script runs, and devDependencies are pruned (GoogleCloudPlatform/buildpacks, cmd/nodejs/npm).
        // The build environment is the one gcloud sent (the same for every function: checked above).
        const buildEnv = buildEnvOf(standIn.sent.get('receivePubSubPush'));
        const ms = {
          ci: buildStep(workspace, ['ci', '--quiet', '--no-fund', '--no-audit', '--prefer-offline'], {
            NODE_ENV: 'development',
            ...buildEnv,
          }),
          build: buildStep(workspace, ['run', 'gcp-build'], { NODE_ENV: 'development', ...buildEnv }),
          prune: buildStep(workspace, ['prune', '--production', '--quiet'], {}),
        };
        expect(statSync(join(workspace, 'dist', 'index.js')).isFile()).toBe(true);
        // The app, bundled by gcp-build where compiled code loads it.
        expect(statSync(join(workspace, 'dist', 'apps', app, 'index.js')).isFile()).toBe(true);
        // The console page, bundled by gcp-build: what inboxConsole serves.
        for (const file of ['index.html', 'app.js', 'app.css'])
          expect(statSync(join(workspace, 'dist', 'console-page', file)).isFile()).toBe(true);
        expect(readdirSync(join(workspace, 'node_modules')).includes('jest')).toBe(false);
        console.log(`deploy rehearsal (${app}): npm ci ${ms.ci} ms, gcp-build ${ms.build} ms, prune ${ms.prune} ms`);

        // The built tree, with the functions' INBOX_APP, loads the bundle and finds the app deploy.sh read from source.
        const runEnv = standIn.sent.get('receivePubSubPush')?.serviceConfig?.environmentVariables ?? {};
        const built = spawnSync(process.execPath, [join(workspace, 'dist', 'cli', 'main.js'), '--json', 'app'], {
          cwd: workspace,
          encoding: 'utf8',
          env: { PATH: process.env.PATH ?? '', INBOX_APP: runEnv.INBOX_APP ?? '' },
        });
        expect({ status: built.status, stderr: built.stderr }).toEqual({ status: 0, stderr: '' });
        expect((JSON.parse(built.stdout) as { topology: unknown }).topology).toEqual(appView(app).topology);

        // What each function must answer without credentials or Firestore: the token check, or the method check.
        const probes: Record<(typeof FUNCTIONS)[number], { method: string; status: number; path?: string }> = {
          receivePubSubPush: { method: 'POST', status: 401 },
          receiveDeadLetter: { method: 'POST', status: 401 },
          runJob: { method: 'POST', status: 401 },
          fireTimer: { method: 'POST', status: 401 },
          startProcess: { method: 'GET', status: 405 },
          sweepJobs: { method: 'GET', status: 405 },
          relayInbox: { method: 'GET', status: 405 },
          // The console's API without a token (its page needs none: Cloud Run IAM guards it).
          inboxConsole: { method: 'GET', status: 401, path: 'api/whoami' },
        };
        for (const fn of FUNCTIONS) {
          const sent = standIn.sent.get(fn);
          const service = fn.toLowerCase();
          const env = {
            ...sent?.serviceConfig?.environmentVariables,
            // What Cloud Run sets in every instance of a gen2 function.
            K_SERVICE: service,
            K_REVISION: `${service}-00001-reh`,
            K_CONFIGURATION: service,
            FUNCTION_TARGET: sent?.buildConfig?.entryPoint ?? '',
            FUNCTION_SIGNATURE_TYPE: 'http',
            NODE_ENV: 'production',
          };
          const fnServed = await serveFunction({
            target: fn,
            source: workspace,
            ownFramework: true,
            cleanEnv: true,
            env,
            readyTimeoutMs: 30_000,
          });
          served.push(fnServed);
          const probe = probes[fn];
          const res = await fetch(`${fnServed.url}${probe.path ?? ''}`, {
            method: probe.method,
            headers: { 'content-type': 'application/json' },
            ...(probe.method === 'POST' ? { body: '{}' } : {}),
          });
          expect({
            fn,
            status: res.status,
            json: res.headers.get('content-type')?.startsWith('application/json'),
          }).toEqual({ fn, status: probe.status, json: true });
          expect(typeof ((await res.json()) as { error?: unknown }).error).toBe('string');
        }
      } finally {
        await Promise.all(served.map((s) => s.stop()));
        rmSync(root, { recursive: true, force: true });
      }
    }, 900_000);

    // For one app only: it is about gcloud's reading of ignore files, not about the app.
    if (app !== DEFAULT_APP) return;
    it('an allow-list ignore file (the one this repository had) uploads no package.json: the test fails on it', async () => {
      const command = deployCommands(appArgs).find((d) => d.fn === 'receivePubSubPush')?.command ?? '';
      const old = command.replace(
        `--ignore-file=${uploadIgnoreFile(app)}`,
        '--ignore-file=test/fixtures/infra/allow-list.gcloudignore',
      );
      expect(old).not.toBe(command);
      const before = new Set(standIn.uploads.keys());
      expect((await gcloud.run(old, ROOT)).status).toBe(0);
      const zip = [...standIn.uploads].find(([object]) => !before.has(object))?.[1];
      const names = zipEntries(zip as Buffer).map((e) => e.name);
      // gcloud tests "." and each directory against "/*" as if they were files: only functions/src/ survives.
      expect(names.length).toBeGreaterThan(0);
      expect(names.every((n) => n.startsWith('functions/src/'))).toBe(true);
      expect(names).not.toContain('package.json');
      expect(names).not.toEqual(expectedUpload(app, models, appFiles));
    });
  },
);
