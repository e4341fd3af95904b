/**
 * Builds the console page into dist/console-page/ (not dist/console/: tsc compiles functions/src/console/ there, and this build empties its folder): index.html (the shell),
 * app.js (src/main.ts with bpmn-js, one bundle), app.css (src/app.css with
 * bpmn-js's CSS inlined) and the bpmn font files app.css points to.
 * esbuild follows the CSS url()s, so the font files copied are exactly the
 * ones bpmn-js 18's CSS names. The console function serves index.html at
 * `/` and the rest at `/assets/<file>`. Run by `npm run build` (tsx).
 */
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const HERE = __dirname;
const OUT = join(HERE, '..', 'dist', 'console-page');

async function main(): Promise<void> {
  // A clean folder: a font renamed by a bpmn-js update must not linger beside the new one.
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  const result = await build({
    // Both named "app": app.js and app.css, the names the shell links.
    entryPoints: [
      { in: join(HERE, 'src', 'main.ts'), out: 'app' },
      { in: join(HERE, 'src', 'app.css'), out: 'app' },
    ],
    outdir: OUT,
    assetNames: '[name]-[hash]',
    bundle: true,
    minify: true,
    sourcemap: true,
    target: 'es2022',
    platform: 'browser',
    format: 'iife',
    loader: { '.woff': 'file', '.woff2': 'file', '.ttf': 'file', '.eot': 'file', '.svg': 'file' },
    logLevel: 'warning',
    metafile: true,
  });
  copyFileSync(join(HERE, 'index.html'), join(OUT, 'index.html'));
  const outputs = Object.entries(result.metafile.outputs).map(
    ([file, o]) => `${file.replace(/^.*dist\/console\//, '')} ${o.bytes} B`,
  );
  console.log(
    `console-ui: built ${outputs.length} files into dist/console-page (${outputs.filter((f) => !f.endsWith('.map')).join(', ')})`,
  );
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
