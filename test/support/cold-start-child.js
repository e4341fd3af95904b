// One cold start, in a fresh process (test/e2e/lazy-start.test.ts spawns it): how long
// importing an entry module takes, and which heavy packages it loaded. Plain
// JavaScript, so no TypeScript loader adds to the modules loaded.
const { performance } = require('node:perf_hooks');
const [entry] = process.argv.slice(2);
const started = performance.now();
require(entry);
const importMs = performance.now() - started;
const loaded = Object.keys(require.cache);
const packages = [
  '@google-cloud/tasks',
  '@google-cloud/pubsub',
  '@google-cloud/storage',
  '@google-cloud/firestore',
  'google-auth-library',
  'bpmn-moddle',
  'zod',
];
const heavy = packages.filter((p) => loaded.some((f) => f.includes(`/node_modules/${p}/`)));
process.stdout.write(JSON.stringify({ importMs, modules: loaded.length, heavy }));
