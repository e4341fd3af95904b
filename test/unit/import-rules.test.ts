import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

/**
 * The import rules of `npm run lint` (.dependency-cruiser.cjs, explained in
 * ARCHITECTURE.md) hold on the real tree, and each one fails on a
 * deliberately wrong import. The wrong imports live in a throw-away copy of
 * the layout in a temporary directory (same paths, so the same rules match),
 * never in the repository, where a build or a lint running at the same time
 * would see them. dependency-cruiser itself does the checking, run as
 * `npm run lint` runs it (its CLI: its JS API is ES modules only).
 */
const ROOT = join(__dirname, '..', '..');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

interface Violation {
  readonly rule: { readonly name: string };
  readonly from: string;
  readonly to: string;
}
interface CruiseResult {
  readonly summary: {
    readonly violations: readonly Violation[];
    readonly error: number;
    readonly totalCruised: number;
  };
}

/**
 * Runs dependency-cruiser in `cwd` and returns its JSON result. The JSON
 * reporter always exits 0; `summary.error` is the exit code of the `err`
 * reporter `npm run lint` uses.
 */
async function cruise(cwd: string, config: string, paths: readonly string[]): Promise<CruiseResult> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [DEPCRUISE, ...paths, '--config', config, '--output-type', 'json'],
    { cwd, maxBuffer: 64 * 1024 * 1024 },
  );
  return JSON.parse(stdout) as CruiseResult;
}

/** Modules imported by the probes below, clean themselves (nothing imports the probes, so these must be imported to be no orphans). */
const STUBS: Readonly<Record<string, string>> = {
  'tools/seeded-random.ts': 'export const seed = 1;',
  'tools/local/stack.ts': 'export const stack = 1;',
  'tools/local/provider.ts': "export type ProviderScript = 'answer';",
  'test/support/inbox.ts': 'export const inbox = 1;',
  'functions/src/log.ts': 'export const log = 1;',
  'functions/src/wiring.ts': 'export const wiring = 1;',
  'functions/src/cli/explain.ts': 'export const explain = 1;',
  'functions/src/engine/state.ts': 'export const state = 1;',
  'functions/src/relay/lane.ts': 'export const lane = 1;',
  'functions/src/receiver/registry.ts': 'export const registry = 1;',
  'functions/src/jobs/run-job.ts': 'export const runJob = 1;',
  'functions/src/inbox/store-message.ts': 'export interface Stored { readonly id: string }',
  'functions/src/beta/z.ts': 'export const z = 1;',
  'functions/src/operations/types.ts': 'export const types = 1;\nexport type Shown = number;',
  'functions/src/console/api.ts': 'export const api = 1;',
  'functions/src/app.ts': 'export const app = 1;',
};

/** One wrong import per rule (and two right ones), with the violations it must raise: rule, from, to. */
const PROBES: ReadonlyArray<{
  readonly file: string;
  readonly source: string;
  readonly expected: ReadonlyArray<readonly [string, string]>;
}> = [
  {
    file: 'functions/src/relay/probe-tools.ts',
    source: "import { seed } from '../../../tools/seeded-random';\nexport const x = seed;",
    expected: [['src-not-to-tooling', 'tools/seeded-random.ts']],
  },
  // relay/decide.ts, the name classify.ts may get: the pure core is matched by pattern. Not even a Firestore type.
  {
    file: 'functions/src/relay/decide.ts',
    source: "import type { Firestore } from '@google-cloud/firestore';\nexport type Db = Firestore;",
    expected: [['pure-core-no-io', 'node_modules/@google-cloud/firestore/build/src/index.js']],
  },
  {
    file: 'functions/src/relay/classify.ts',
    source: "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;",
    expected: [
      ['pure-core-no-io', 'fs'],
      ['pure-core-stays-pure', 'fs'],
    ],
  },
  // A run-time import of an adapter is refused; a type-only one (erased by tsc) is allowed.
  {
    file: 'functions/src/process/variables.ts',
    source:
      "import { runJob } from '../jobs/run-job';\nimport type { Stored } from '../inbox/store-message';\nexport const v: [number, Stored | null] = [runJob, null];",
    expected: [['pure-core-stays-pure', 'functions/src/jobs/run-job.ts']],
  },
  {
    file: 'functions/src/core/probe.ts',
    source: "import { log } from '../log';\nexport const c = log;",
    expected: [
      ['layer-core', 'functions/src/log.ts'],
      ['pure-core-stays-pure', 'functions/src/log.ts'],
    ],
  },
  {
    file: 'functions/src/http/probe.ts',
    source: "import { state } from '../engine/state';\nexport const h = state;",
    expected: [['layer-shared', 'functions/src/engine/state.ts']],
  },
  {
    file: 'functions/src/bpmn/probe.ts',
    source: "import { state } from '../engine/state';\nexport const b = state;",
    expected: [['layer-bpmn', 'functions/src/engine/state.ts']],
  },
  {
    file: 'functions/src/engine/store/probe.ts',
    source: "import { lane } from '../../relay/lane';\nexport const e = lane;",
    expected: [['layer-engine', 'functions/src/relay/lane.ts']],
  },
  {
    file: 'functions/src/inbox/probe.ts',
    source: "import { registry } from '../receiver/registry';\nexport const i = registry;",
    expected: [['layer-inbox', 'functions/src/receiver/registry.ts']],
  },
  {
    file: 'functions/src/jobs/probe.ts',
    source: "import { lane } from '../relay/lane';\nexport const j = lane;",
    expected: [['layer-receiver-jobs', 'functions/src/relay/lane.ts']],
  },
  {
    file: 'functions/src/alpha/wire.ts',
    source: "import { wiring } from '../wiring';\nexport const w = wiring;",
    expected: [['composition-root', 'functions/src/wiring.ts']],
  },
  {
    file: 'functions/src/alpha/ops.ts',
    source: "import { explain } from '../cli/explain';\nexport const o = explain;",
    expected: [['cli-on-top', 'functions/src/cli/explain.ts']],
  },
  {
    file: 'functions/src/relay/probe-ops.ts',
    source: "import { types } from '../operations/types';\nexport const r = types;",
    expected: [['operations-for-operators', 'functions/src/operations/types.ts']],
  },
  {
    file: 'functions/src/operations/probe.ts',
    source: "import { api } from '../console/api';\nexport const o = api;",
    expected: [['console-on-top', 'functions/src/console/api.ts']],
  },
  // The page: of functions/src only operations/types.ts, and only its types.
  {
    file: 'console-ui/src/probe-log.ts',
    source: "import { log } from '../../functions/src/log';\nexport const p = log;",
    expected: [['console-page-types-only', 'functions/src/log.ts']],
  },
  {
    file: 'console-ui/src/probe-value.ts',
    source: "import { types } from '../../functions/src/operations/types';\nexport const p = types;",
    expected: [['console-page-erased-imports', 'functions/src/operations/types.ts']],
  },
  {
    file: 'console-ui/src/probe-type.ts',
    source: "import type { Shown } from '../../functions/src/operations/types';\nexport const p: Shown = 1;",
    expected: [],
  },
  {
    file: 'functions/src/alpha/one.ts',
    source: "import { two } from './two';\nexport const one = (): number => two() + 1;",
    expected: [['no-circular', 'functions/src/alpha/two.ts']],
  },
  // A cycle is reported once, at the dependency where it is first seen.
  {
    file: 'functions/src/alpha/two.ts',
    source: "import { one } from './one';\nexport const two = (): number => one() + 1;",
    expected: [],
  },
  // Two folders through each other, no module cycle: beta/x -> gamma/y -> beta/z.
  { file: 'functions/src/beta/x.ts', source: "import { y } from '../gamma/y';\nexport const x = y;", expected: [] },
  { file: 'functions/src/gamma/y.ts', source: "import { z } from '../beta/z';\nexport const y = z;", expected: [] },
  {
    file: 'functions/src/alpha/dev.ts',
    source: "import fc from 'fast-check';\nexport const d = fc;",
    expected: [['src-not-to-dev-dependency', 'node_modules/fast-check/lib/cjs/fast-check.js']],
  },
  {
    file: 'functions/src/alpha/undeclared.ts',
    source: "import semver from 'semver';\nexport const u = semver;",
    expected: [['no-non-package-json', 'node_modules/semver/index.js']],
  },
  {
    file: 'functions/src/alpha/typo.ts',
    source: "import { nope } from './does-not-exist';\nexport const t = nope;",
    expected: [['not-to-unresolvable', './does-not-exist']],
  },
  {
    file: 'functions/src/alpha/orphan.ts',
    source: 'export const orphan = 1;',
    expected: [['no-orphans', 'functions/src/alpha/orphan.ts']],
  },
  {
    file: 'test/unit/probe.test.ts',
    source: "import { inbox } from '../support/inbox';\nexport const p = inbox;",
    expected: [['unit-tests-no-emulators', 'test/support/inbox.ts']],
  },
  // Reached through a module that is no helper itself (tools/demo/plan.ts); its type-only import of provider.ts is fine.
  {
    file: 'tools/demo/plan.ts',
    source:
      "import { stack } from '../local/stack';\nimport type { ProviderScript } from '../local/provider';\nexport const plan: [number, ProviderScript] = [stack, 'answer'];",
    expected: [],
  },
  {
    file: 'test/unit/reach.test.ts',
    source: "import { plan } from '../../tools/demo/plan';\nexport const r = plan;",
    expected: [['unit-tests-never-reach-emulators', 'tools/local/stack.ts']],
  },
  {
    file: 'test/unit/fine.test.ts',
    source:
      "import type { ProviderScript } from '../../tools/local/provider';\nimport { lane } from '../../functions/src/relay/lane';\nexport const f: [ProviderScript, number] = ['answer', lane];",
    expected: [],
  },
  // The system names no app: not its tools, not its tests (they run the fixture app under test/fixtures/).
  {
    file: 'tools/local/probe-app.ts',
    source: "import { steps } from '../../examples/some-app/steps';\nexport const p = steps;",
    expected: [['system-not-to-apps', 'examples/some-app/steps.ts']],
  },
  {
    file: 'test/e2e/probe-app.test.ts',
    source: "import { steps } from '../../examples/some-app/steps';\nexport const p = steps;",
    expected: [['system-not-to-apps', 'examples/some-app/steps.ts']],
  },
  // An app's deployed files import app.ts of the system and nothing else of it; its tests and tooling in subfolders may.
  {
    file: 'examples/some-app/steps.ts',
    source:
      "import { app } from '../../functions/src/app';\nimport { log } from '../../functions/src/log';\nexport const steps = [app, log];",
    expected: [['app-public-surface', 'functions/src/log.ts']],
  },
  {
    file: 'examples/some-app/test/tool.ts',
    source: "import { log } from '../../../functions/src/log';\nexport const t = log;",
    expected: [],
  },
];

/** Folder-level violations name folders, not files. */
const FOLDER_CYCLE: ReadonlyArray<readonly [string, string, string]> = [
  ['no-folder-cycle', 'functions/src/beta', 'functions/src/gamma'],
  ['no-folder-cycle', 'functions/src/gamma', 'functions/src/beta'],
];

const key = ([rule, from, to]: readonly [string, string, string]): string => `${rule}: ${from} -> ${to}`;

let probeDir = '';

beforeAll(() => {
  probeDir = mkdtempSync(join(tmpdir(), 'import-rules-'));
  for (const [file, source] of [...Object.entries(STUBS), ...PROBES.map((p): [string, string] => [p.file, p.source])]) {
    mkdirSync(dirname(join(probeDir, file)), { recursive: true });
    writeFileSync(join(probeDir, file), `${source}\n`);
  }
  // The real package.json (which packages are dependencies, which dev ones) and node_modules.
  copyFileSync(join(ROOT, 'package.json'), join(probeDir, 'package.json'));
  symlinkSync(join(ROOT, 'node_modules'), join(probeDir, 'node_modules'), 'dir');
  writeFileSync(
    join(probeDir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { module: 'commonjs', moduleResolution: 'node', esModuleInterop: true, strict: true },
    }),
  );
  // The house rules as they are; only node_modules is a symlink here, whose target lies outside this directory.
  writeFileSync(
    join(probeDir, 'probe.dependency-cruiser.cjs'),
    `const house = require(${JSON.stringify(CONFIG)});\nmodule.exports = { ...house, options: { ...house.options, preserveSymlinks: true } };\n`,
  );
});

afterAll(() => {
  if (probeDir !== '') rmSync(probeDir, { recursive: true, force: true });
});

test('the real tree keeps every rule, and each rule fails on its wrong import', async () => {
  // The apps' folder is cruised when there is one: the system's own tree has none to need (a copy without examples/ is a valid tree).
  const apps = existsSync(join(ROOT, 'examples')) ? ['examples'] : [];
  const [real, probed] = await Promise.all([
    cruise(ROOT, CONFIG, ['functions/src', ...apps, 'console-ui', 'tools', 'test']),
    cruise(probeDir, 'probe.dependency-cruiser.cjs', ['functions/src', 'examples', 'console-ui', 'tools', 'test']),
  ]);

  expect(real.summary.violations.map((v) => key([v.rule.name, v.from, v.to]))).toEqual([]);
  expect(real.summary.error).toBe(0);
  // The real run cruised the tree, not an empty selection.
  expect(real.summary.totalCruised).toBeGreaterThan(250);

  const expected = [
    ...PROBES.flatMap((p) => p.expected.map(([rule, to]) => key([rule, p.file, to]))),
    ...FOLDER_CYCLE.map(key),
  ].sort();
  expect(probed.summary.violations.map((v) => key([v.rule.name, v.from, v.to])).sort()).toEqual(expected);
  // Every one an error, so `npm run lint` fails on it.
  expect(probed.summary.error).toBe(expected.length);
  // About 4 s of CPU for the two runs (the real tree's 300 modules are most of it); more on a busy machine.
}, 60_000);

test('every rule of the house has its wrong import above', () => {
  const house = require(CONFIG) as { forbidden: ReadonlyArray<{ name: string }> };
  const probed = new Set([
    ...PROBES.flatMap((p) => p.expected.map(([rule]) => rule)),
    ...FOLDER_CYCLE.map(([rule]) => rule),
  ]);
  expect(house.forbidden.map((rule) => rule.name).sort()).toEqual([...probed].sort());
});
