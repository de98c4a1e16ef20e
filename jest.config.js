// @ts-check
/**
 * One command runs unit and integration tests. Integration tests talk to real Postgres, Redis,
 * LMDB and a Temporal dev server that the global setup starts on a test port.
 * @type {import('jest').Config}
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', {}] },
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  setupFiles: ['<rootDir>/test/support/quiet-temporal.ts'],
  testTimeout: 60_000,
  maxWorkers: 2,
};
