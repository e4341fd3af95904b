/**
 * The projects:
 * - `unit`: pure code (decoding, classification, BPMN, plans, property tests), no global setup,
 *   no emulators: `npm run test:unit`, the loop to run while editing; with the apps' pure tests
 *   (examples/APP/test/unit/).
 * - `emulators`: everything that talks to the Firestore / Pub/Sub emulators, gcloud or served
 *   functions (test/ and the apps' examples/APP/test/); its global setup starts the emulators
 *   (or reuses running ones).
 * - `cloud-tasks-emulator`: the tests of packages/cloud-tasks-emulator, beside the package. They need
 *   no Google emulator (the emulator under test, the real @google-cloud/tasks client and loopback HTTP
 *   targets), so no global setup; kept out of `unit` because they are not pure and wait on real
 *   dispatch timers (`npm test -w @inbox/cloud-tasks-emulator` runs them alone).
 * - `storage-emulator`: the tests of packages/storage-emulator, the same way: the emulator under test
 *   and the real @google-cloud/storage client only (`npm test -w @inbox/storage-emulator`).
 * `npm test` runs all four. A test belongs in test/unit/ or test/property/ exactly when it needs none
 * of those; the import rules (`npm run lint`) keep those folders away from the emulator helpers.
 *
 * @type {import('jest').Config}
 */
/** Packages published as ES modules only, compiled for Jest (see `transform`). */
const ESM_ONLY = ['feelin', 'lezer-feel', 'min-dash', 'temporal-polyfill', 'temporal-utils'];
const shared = {
  testEnvironment: 'node',
  // Type checking is `npm run typecheck`; tests only transpile, which is much faster.
  transform: {
    '^.+\\.ts$': ['ts-jest', { diagnostics: false }],
    // feelin (FEEL) and what it imports are ES modules only. Node >= 20.19 loads them by require(); Jest's
    // own module loader does not (before Node 24.9), so Jest compiles just these to CommonJS.
    '^.+\\.js$': ['ts-jest', { diagnostics: false, tsconfig: { allowJs: true, module: 'commonjs' } }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY.join('|')})/)`],
};
const { existsSync } = require('node:fs');
const { join } = require('node:path');

const UNIT = ['<rootDir>/test/unit/', '<rootDir>/test/property/'];
/** The apps' own tests live beside them (examples/APP/test/): their unit/ folder is pure, the rest uses the emulators. */
const APP_UNIT = '<rootDir>/examples/[^/]+/test/unit/';
/** examples/ as a root only where it exists: the system's own tests need no app (tools/ci/without-examples.sh runs them without). */
const APPS = existsSync(join(__dirname, 'examples')) ? ['<rootDir>/examples/'] : [];

module.exports = {
  projects: [
    {
      ...shared,
      displayName: 'unit',
      roots: [...UNIT, ...APPS],
      testMatch: [
        '<rootDir>/test/unit/**/*.test.ts',
        '<rootDir>/test/property/**/*.test.ts',
        '<rootDir>/examples/*/test/unit/**/*.test.ts',
      ],
    },
    {
      ...shared,
      displayName: 'cloud-tasks-emulator',
      roots: ['<rootDir>/packages/cloud-tasks-emulator/test/'],
      testMatch: ['**/*.test.ts'],
    },
    {
      ...shared,
      displayName: 'storage-emulator',
      roots: ['<rootDir>/packages/storage-emulator/test/'],
      testMatch: ['**/*.test.ts'],
    },
    {
      ...shared,
      displayName: 'emulators',
      roots: ['<rootDir>/test', ...APPS],
      testMatch: ['<rootDir>/test/**/*.test.ts', '<rootDir>/examples/*/test/**/*.test.ts'],
      testPathIgnorePatterns: ['/node_modules/', ...UNIT, APP_UNIT],
      // firebase-tools lives outside the root install (tools/firebase/firebase.sh installs it; `npm test` does first).
      moduleNameMapper: { '^firebase-tools/(.*)$': '<rootDir>/tools/firebase/node_modules/firebase-tools/$1' },
      globalSetup: '<rootDir>/test/setup/global-setup.ts',
      globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
    },
  ],
  // A global option (ignored inside a project). Emulator round trips are slow on a 2-core machine;
  // individual tests wait on conditions, never on sleeps.
  testTimeout: 60_000,
};
