#!/usr/bin/env node
// The package ships TypeScript only (it is never built or deployed); tsx
// compiles src/ on the fly, as it does for every other tool in the repository.
require('tsx/cjs');
const { runCliAsProcess } = require('../src/cli.ts');

runCliAsProcess(process.argv.slice(2));
