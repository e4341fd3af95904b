/**
 * Bundles an app (INBOX_APP, the configuration's default unless set) for compiled
 * code: `dist/apps/FOLDER/index.js`, the app's own files in one CommonJS
 * file, its packages and the system's public module (functions/src/app.ts,
 * compiled to dist/app.js by tsc) left as requires, so the deployment runs
 * one copy of the system. An import of any other system module is refused:
 * an app's only door is app.ts. Run by `npm run build`; the local stack and
 * the tests call {@link buildApp} for the apps they serve.
 */
import { dirname, join, relative, resolve, sep } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { type CheckedApp, checkApp } from '../../functions/src/apps/check-app';
import { appBundle, appFolder, packageRoot } from '../../functions/src/apps/load-app';
import { loadAppSettings } from '../../functions/src/config';

const ROOT = packageRoot(join(__dirname, '..', '..', 'functions', 'src'));
const SYSTEM = join(ROOT, 'functions', 'src');
const PUBLIC_MODULE = join(SYSTEM, 'app');

/** Rewrites the app's import of functions/src/app to the compiled dist/app.js; refuses any other system import. */
function systemAsPublicModule(bundle: string): Plugin {
  return {
    name: 'inbox-public-module',
    setup(b) {
      b.onResolve({ filter: /^\.{1,2}\// }, (args) => {
        const target = resolve(args.resolveDir, args.path).replace(/\.ts$/, '');
        if (target === PUBLIC_MODULE)
          return {
            path: `./${relative(dirname(bundle), join(ROOT, 'dist', 'app.js'))
              .split(sep)
              .join('/')}`,
            external: true,
          };
        if (target.startsWith(`${SYSTEM}${sep}`))
          return {
            errors: [
              {
                text: `${relative(ROOT, args.importer)} imports ${relative(ROOT, target)}: an app imports only functions/src/app.ts, the system's public module`,
              },
            ],
          };
        return undefined;
      });
    },
  };
}

/**
 * Checks the app in `app` (a folder relative to the repository root) as a
 * start would (functions/src/apps/check-app.ts: a refusal names the app's
 * file and the item), then bundles it; returns the bundle's path and what
 * the check found.
 */
export async function buildApp(
  app: string,
  bpmnDir: string | null = null,
): Promise<{ readonly bundle: string; readonly checked: CheckedApp }> {
  const checked = await checkApp({ app, bpmnDir });
  const bundle = appBundle(app, ROOT);
  await build({
    entryPoints: [join(appFolder(app, ROOT), 'index.ts')],
    outfile: bundle,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    sourcemap: true,
    logLevel: 'warning',
    plugins: [systemAsPublicModule(bundle)],
  });
  return { bundle, checked };
}

if (require.main === module) {
  const { app, bpmnDir } = loadAppSettings(process.env);
  buildApp(app, bpmnDir).then(
    ({ bundle }) => console.log(`app: built ${app} into ${relative(ROOT, bundle)}`),
    (err: unknown) => {
      console.error(`app: ${app} not built: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
