/**
 * `npm run demo`: the demo of the app INBOX_APP names (its `demo/demo.ts`),
 * by default the default app's failure-mode demo. An app without a demo
 * gets one line saying so.
 */
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { appFolder, packageRoot } from '../../functions/src/apps/load-app';
import { loadAppSettings } from '../../functions/src/config';

const { app } = loadAppSettings(process.env);
const demo = join(appFolder(app), 'demo', 'demo.ts');
if (!existsSync(demo)) {
  console.error(
    `npm run demo: the app ${app} has no demo (${relative(packageRoot(), demo)}); examples/work-orders has one: INBOX_APP=examples/work-orders npm run demo`,
  );
  process.exit(2);
}
require(demo);
