import { existsSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { App } from '../app';
import type { MessageRegistry, MessageType } from '../receiver/registry';
import { AppDefinitionError } from './check-definition';

/**
 * Loads the app INBOX_APP names: its folder, relative to the package root
 * (the folder of package.json), whose `index.ts` default-exports defineApp's
 * value. Code running from TypeScript source (tests, tsx) loads the app's
 * source; compiled code (dist/, the deployment) loads the app's bundle that
 * `npm run build` wrote to `dist/apps/FOLDER/index.js`, so both halves share
 * one copy of the system (a PermanentJobError is the system's class).
 */

/** The package root, found by walking up from here: the same code runs from functions/src and from dist/. */
export function packageRoot(from: string = __dirname): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && (existsSync(join(dir, 'functions')) || existsSync(join(dir, 'dist'))))
      return dir;
    if (dirname(dir) === dir) throw new Error(`no package root (package.json) above ${from}`);
  }
}

/** The app's folder, absolute; refuses a path that leaves the package (INBOX_APP is a folder inside the repository). */
export function appFolder(app: string, root: string = packageRoot()): string {
  const folder = resolve(root, app);
  const inside = relative(root, folder);
  if (isAbsolute(app) || inside === '' || inside.startsWith('..') || inside.split(sep).includes('node_modules')) {
    throw new AppDefinitionError(
      `INBOX_APP=${app}: an app is a folder inside the repository, given relative to its root (e.g. examples/work-orders)`,
    );
  }
  return folder;
}

/** Where `npm run build` bundles an app for compiled code: `dist/apps/FOLDER/index.js`. */
export function appBundle(app: string, root: string = packageRoot()): string {
  return join(root, 'dist', 'apps', relative(root, appFolder(app, root)), 'index.js');
}

const runningFromSource = (): boolean => __filename.endsWith('.ts');

/** Whether a module's export is an app defineApp made (its shape; the class identity of a second system copy would differ). */
function asApp(exported: unknown, where: string): App {
  const candidate = (exported as { default?: unknown } | null)?.default ?? exported;
  const app = candidate as Partial<App> | null;
  if (
    typeof app !== 'object' ||
    app === null ||
    typeof app.name !== 'string' ||
    !Array.isArray(app.messages) ||
    typeof app.steps !== 'function'
  ) {
    throw new AppDefinitionError(
      `${where}: its default export is not an app; end the file with \`export default defineApp({ … })\` (functions/src/app.ts)`,
    );
  }
  return app as App;
}

/**
 * The app as the system runs it, with the file it came from. Every error
 * names that file: a declaration defineApp refused, a missing folder or
 * bundle (with the command that makes it).
 */
export function loadApp(
  app: string,
  root: string = packageRoot(),
): { readonly app: App; readonly file: string; readonly folder: string } {
  const folder = appFolder(app, root);
  const file = runningFromSource() ? join(folder, 'index.ts') : appBundle(app, root);
  if (!existsSync(file)) {
    const fix = runningFromSource()
      ? `create ${relative(root, file)} (docs/your-own-process.md)`
      : `run \`INBOX_APP=${app} npm run build\` (it bundles the app into dist/apps/)`;
    throw new AppDefinitionError(`INBOX_APP=${app}: no ${relative(root, file)}: ${fix}`);
  }
  let exported: unknown;
  try {
    exported = require(file) as unknown;
  } catch (err) {
    if (err instanceof Error && err.name === 'AppDefinitionError')
      throw new AppDefinitionError(`${relative(root, join(folder, 'index.ts'))}: ${err.message}`);
    throw err;
  }
  return { app: asApp(exported, relative(root, file)), file, folder };
}

/**
 * The app's models folder (defineApp's `models`, relative to its folder),
 * absolute; refused when it leads outside the repository (the upload and
 * the build carry the repository only).
 */
export function modelsFolder(folder: string, app: App, root: string = packageRoot()): string {
  const dir = join(folder, app.models);
  const inside = relative(root, dir);
  if (isAbsolute(app.models) || inside === '' || inside.startsWith('..') || isAbsolute(inside))
    throw new AppDefinitionError(
      `${relative(root, join(folder, 'index.ts'))}: models: ${JSON.stringify(app.models)} is no folder inside the repository; name one relative to the app's folder (e.g. bpmn)`,
    );
  return dir;
}

/** The app's message types as the receiver, the relay and the CLI read them. */
export function registryOf(app: App): MessageRegistry {
  return app.messages.map((m): MessageType => m);
}
