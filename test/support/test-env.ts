/** What the global setup started, handed to test files through the environment. */
export interface TestState {
  stateDir: string;
  temporalAddress: string;
  temporalPort: number;
  databaseUrl: string;
  database: string;
  adminUrl: string;
  redisUrl: string;
  redisKeyPrefix: string;
  workflowBundlePath: string;
}

export const TEST_STATE_VARIABLE = 'GALANG_TEST_STATE';

export function testState(): TestState {
  const raw = process.env[TEST_STATE_VARIABLE];
  if (!raw) throw new Error('Run the tests with `npm test`: the global setup did not run');
  return JSON.parse(raw) as TestState;
}
