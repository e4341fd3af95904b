/**
 * infra/lib/app-files.js: what the functions' upload carries of the app
 * (deploy.sh lets exactly these back in, infra/lib/app.sh). Real esbuild on
 * real files: the examples in the repository, and small trees in a sandbox
 * for what it must refuse. No Google Cloud, no emulator.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { appView, CLAIMS_APP, DEFAULT_APP, ROOT, sandbox, useSandbox } from './helpers';

useSandbox();

const TOOL = join(ROOT, 'infra', 'lib', 'app-files.js');

function appFiles(cwd: string, viewFile: string): SpawnSyncReturns<string> {
  return spawnSync('node', [TOOL, viewFile], { cwd, encoding: 'utf8', timeout: 60_000 });
}

/** A repository-like tree in the sandbox: `files` by path, and the app view deploy.sh would have read. */
function tree(files: Readonly<Record<string, string>>, view: unknown): { root: string; viewFile: string } {
  const root = mkdtempSync(join(sandbox(), 'repo-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const viewFile = join(root, 'app.json');
  writeFileSync(viewFile, JSON.stringify(view));
  return { root, viewFile };
}

describe('app-files.js on the examples', () => {
  it.each([
    // The default app's models are the repository's top-level bpmn/ (examples/work-orders/index.ts); claims keeps its own.
    [DEFAULT_APP, 'bpmn', ['billing.ts', 'index.ts', 'messages.ts', 'steps.ts']],
    [CLAIMS_APP, `${CLAIMS_APP}/bpmn`, ['index.ts', 'messages.ts', 'payout.ts', 'steps.ts']],
  ])(
    "%s: its models folder (%s), then the files its bundle takes (not its tests or tooling, nor the system's modules)",
    (folder, models, files) => {
      const result = appFiles(ROOT, appView(folder).file);
      expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
      expect(result.stdout).toBe([`models ${models}`, ...files.map((f) => `file ${folder}/${f}`)].join('\n') + '\n');
    },
    60_000,
  );
});

describe('app-files.js refuses, naming it, what the upload could not carry', () => {
  const APP = { folder: 'apps/a', models: 'apps/a/bpmn' };

  it('a file the app imports from outside its folder', () => {
    const { root, viewFile } = tree(
      {
        'apps/a/index.ts': "import { x } from '../shared/util';\nexport default x;\n",
        'apps/shared/util.ts': 'export const x = 1;\n',
        'apps/a/bpmn/p.bpmn': '',
      },
      APP,
    );
    const result = appFiles(root, viewFile);
    expect({ status: result.status, stdout: result.stdout }).toEqual({ status: 1, stdout: '' });
    expect(result.stderr).toBe(
      "app-files: apps/a/index.ts imports apps/shared/util.ts, outside the app's folder: the upload carries that folder only; move what the app imports into it\n",
    );
  });

  it("a models folder outside the app's folder but inside the repository is listed (the default app's bpmn/)", () => {
    const { root, viewFile } = tree(
      { 'apps/a/index.ts': 'export default 1;\n', 'bpmn/p.bpmn': '' },
      { ...APP, models: 'bpmn' },
    );
    const result = appFiles(root, viewFile);
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
    expect(result.stdout).toBe('models bpmn\nfile apps/a/index.ts\n');
  });

  it.each([
    [
      'outside the repository',
      '../shared/bpmn',
      'app-files: the app\'s models folder "../shared/bpmn" is outside the repository',
    ],
    [
      "inside a folder the upload carries for the system's own files",
      'functions/src/bpmn',
      "app-files: the app's models folder functions/src/bpmn is inside functions/, which holds the system's own files",
    ],
  ])('a models folder %s', (_what, models, message) => {
    const { root, viewFile } = tree({ 'apps/a/index.ts': 'export default 1;\n' }, { ...APP, models });
    const result = appFiles(root, viewFile);
    expect({ status: result.status, stdout: result.stdout }).toEqual({ status: 1, stdout: '' });
    expect(result.stderr).toContain(message);
  });

  it("an import that does not resolve: esbuild's answer with the file and line", () => {
    const { root, viewFile } = tree(
      { 'apps/a/index.ts': "export const a = 1;\nexport { b } from './missing';\n" },
      APP,
    );
    const result = appFiles(root, viewFile);
    expect(result.status).toBe(1);
    expect(result.stderr).toBe('app-files: apps/a/index.ts:2: Could not resolve "./missing"\n');
  });

  it.each([
    [
      'a folder that leaves the repository',
      { ...APP, folder: '../elsewhere' },
      '"folder" "../elsewhere" is no folder inside the repository',
    ],
    ['no JSON at all', 'not json', 'is this the output of `inbox --json app`?'],
  ])('%s', (_what, view, message) => {
    const { root, viewFile } = tree({}, view);
    if (typeof view === 'string') writeFileSync(viewFile, view);
    const result = appFiles(root, viewFile);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(message);
  });
});
