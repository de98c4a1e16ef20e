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
  // The production-shaped stack has its own run: npm run test:production.
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/production/'],
  transform: { '^.+\\.[tj]s$': ['@swc/jest', {}] },
  // light-my-request (Fastify's inject) requires the ESM-only `cookie`; Node 20 loads it
  // natively, Jest's module system does not, so it is compiled like our own code.
  transformIgnorePatterns: ['/node_modules/(?!cookie/)'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  setupFiles: ['<rootDir>/test/support/quiet-temporal.ts'],
  testTimeout: 60_000,
  maxWorkers: 2,
};
