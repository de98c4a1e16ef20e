import type { Config } from '../../src/config/config';
import { spawnEntry } from './child-entry';
import type { ChildEntry } from './child-entry';
import {
  ALL_PROVIDERS_ENV,
  CLIENT_SECRET,
  OPERATOR_SECRET,
  OTHER_CLIENT_SECRET,
  UNLIMITED,
} from './stack';

export interface ApiProcess extends ChildEntry {
  url: string;
}

/** The environment of an API process configured like the test stack `config` describes. */
export function apiEnv(config: Config): Record<string, string> {
  return {
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: config.databaseUrl,
    REDIS_URL: config.redisUrl,
    REDIS_KEY_PREFIX: config.redisKeyPrefix,
    TEMPORAL_ADDRESS: config.temporal.address,
    TEMPORAL_TASK_QUEUE: config.temporal.taskQueue,
    LMDB_PATH: config.lmdbPath,
    API_KEYS: `client-a:${CLIENT_SECRET},client-b:${OTHER_CLIENT_SECRET}`,
    OPERATOR_KEYS: `ops:${OPERATOR_SECRET}`,
    PAYMENT_TIMEOUT_SECONDS: String(config.paymentTimeoutSeconds),
    SIMULATOR_WEBHOOK_SECRET: config.simulator.webhookSecret,
    INBOX_REDELIVERY_INTERVAL_MS: String(config.inboxRedeliveryIntervalMs),
    EARLY_RETURN_MS: String(config.earlyReturn.budgetMs),
    ...UNLIMITED,
    ...ALL_PROVIDERS_ENV,
  };
}

/**
 * Runs the real API entry point as a separate process, configured like the test stack, so
 * tests can share one LMDB environment across processes and kill -9 one of them.
 */
export async function spawnApi(
  config: Config,
  overrides: Record<string, string> = {},
  /** `listening`: resolve as soon as it listens, before it has booted. */
  until: 'ready' | 'listening' = 'ready',
): Promise<ApiProcess> {
  const api = await spawnEntry('api', { ...apiEnv(config), ...overrides }, (line) =>
    line.includes(until === 'ready' ? '"api ready"' : '"api listening"'),
  );
  const { url } = JSON.parse(api.readyLine) as { url: string };
  return { ...api, url };
}
