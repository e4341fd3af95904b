#!/usr/bin/env node
/**
 * What the functions' upload must carry of the app, for infra/deploy.sh
 * (infra/lib/app.sh, upload_ignore_file). Cloud Build's `npm run gcp-build`
 * checks the app from its source and bundles it (tools/build/build-app.ts),
 * and the functions read its models at run time; nothing else of the app's
 * folder is needed (its tests, its tooling, its README).
 *
 *   app-files.js APP_JSON     APP_JSON: the output of `inbox --json app`. Prints, relative
 *                             to the repository root (the working directory):
 *                             "models PATH", the app's models folder, then one
 *                             "file PATH" per file its bundle takes: its index.ts and
 *                             what that imports, as esbuild resolves them for the
 *                             bundle (the system's modules under functions/src and the
 *                             packages are uploaded or installed anyway, so not listed)
 *
 * Refuses, naming it, an imported file outside the app's folder (the upload
 * lets back in the app's folder and its models, nothing else, so an app's
 * code is one folder), and a models folder outside the repository or one of
 * the folders the upload carries anyway. The models folder may be outside
 * the app's folder: the default app's is the repository's top-level bpmn/
 * (examples/work-orders/index.ts), let back in with it. Reads local files
 * only; never calls a cloud API.
 */
'use strict';

const fs = require('fs');
const path = require('path');

/** The folder relative to the root, with forward slashes, or null when it leaves the root. */
function inside(root, file) {
  const rel = path.relative(root, path.resolve(root, file));
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return null;
  return rel.split(path.sep).join('/');
}

const within = (rel, folder) => rel === folder || rel.startsWith(`${folder}/`);

/** The folders the upload carries whatever the app (infra/gcloudignore): no app's models live in them. */
const UPLOADED = ['functions', 'console-ui', 'tools', 'node_modules', 'dist'];

/** Marks every import of the system (functions/src) external, as the app's bundle does: uploaded anyway. */
function systemExternal(system) {
  return {
    name: 'inbox-system-external',
    setup(build) {
      build.onResolve({ filter: /^\.{1,2}\// }, (args) => {
        const target = path.resolve(args.resolveDir, args.path);
        return target.startsWith(`${system}${path.sep}`) ? { path: target, external: true } : undefined;
      });
    },
  };
}

async function appFiles(appJson) {
  const root = process.cwd();
  let view;
  try {
    view = JSON.parse(fs.readFileSync(appJson, 'utf8'));
  } catch (err) {
    throw new Error(
      `${appJson}: ${err instanceof Error ? err.message : String(err)} (is this the output of \`inbox --json app\`?)`,
      { cause: err },
    );
  }
  const folder = typeof view?.folder === 'string' ? inside(root, view.folder) : null;
  if (folder === null)
    throw new Error(`${appJson}: "folder" ${JSON.stringify(view?.folder)} is no folder inside the repository`);
  const models = typeof view.models === 'string' ? inside(root, view.models) : null;
  if (models === null) {
    throw new Error(
      `the app's models folder ${JSON.stringify(view.models)} is outside the repository: the upload carries the repository only; move the models into it (defineApp's models)`,
    );
  }
  const carried = UPLOADED.find((top) => within(models, top));
  if (carried !== undefined) {
    throw new Error(
      `the app's models folder ${models} is inside ${carried}/, which holds the system's own files: put the models in the app's folder or in bpmn/ (defineApp's models)`,
    );
  }
  const esbuild = require('esbuild');
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: [path.join(folder, 'index.ts')],
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    packages: 'external',
    outdir: path.join(root, 'dist', 'apps', folder),
    logLevel: 'silent',
    plugins: [systemExternal(path.join(root, 'functions', 'src'))],
  });
  const files = Object.keys(result.metafile.inputs)
    .map((input) => inside(root, input))
    .sort();
  const outside = files.filter((file) => file === null || !within(file, folder));
  if (outside.length > 0) {
    throw new Error(
      `${folder}/index.ts imports ${outside.join(', ')}, outside the app's folder: the upload carries that folder only; move what the app imports into it`,
    );
  }
  return [`models ${models}`, ...files.map((file) => `file ${file}`)];
}

appFiles(process.argv[2] ?? '').then(
  (lines) => {
    for (const line of lines) process.stdout.write(`${line}\n`);
  },
  (err) => {
    const message =
      err && Array.isArray(err.errors) && err.errors.length > 0
        ? err.errors.map((e) => `${e.location ? `${e.location.file}:${e.location.line}: ` : ''}${e.text}`).join('; ')
        : err instanceof Error
          ? err.message
          : String(err);
    process.stderr.write(`app-files: ${message}\n`);
    process.exit(1);
  },
);
