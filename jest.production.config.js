// @ts-check
/**
 * The production-shaped stack's tests (test/production/): each brings up the whole stack of
 * scripts/stack/ itself (Temporal server on PostgreSQL, mTLS, dist/ entry points), so they need
 * none of the shared services the main suite's global setup starts, and run one at a time.
 * @type {import('jest').Config}
 */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test/production'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.[tj]s$': ['@swc/jest', {}] },
  testTimeout: 120_000,
  maxWorkers: 1,
};
