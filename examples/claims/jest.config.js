/**
 * The claims example's tests, from the repository root:
 *   npx jest -c examples/claims/jest.config.js examples/claims/test/unit
 *   flock /tmp/heavy.lock npx jest -c examples/claims/jest.config.js examples/claims/test/e2e
 * `unit` needs nothing running; `emulators` starts (or reuses) the Firestore
 * and Pub/Sub emulators with the repository's own global setup.
 *
 * @type {import('jest').Config}
 */
const { join } = require('node:path');

// module.path: this file's folder (the lint's CommonJS globals have no __dirname).
const rootDir = join(module.path, '..', '..');
const shared = { rootDir, testEnvironment: 'node', transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] }, testMatch: ['**/*.test.ts'] };

module.exports = {
  rootDir,
  projects: [
    { ...shared, displayName: 'claims-unit', roots: ['<rootDir>/examples/claims/test/unit/'] },
    {
      ...shared,
      displayName: 'claims-emulators',
      roots: ['<rootDir>/examples/claims/test/e2e/'],
      globalSetup: '<rootDir>/test/setup/global-setup.ts',
      globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
    },
  ],
  testTimeout: 60_000,
};
