import { spawnEntry } from './child-entry';
import type { ChildEntry } from './child-entry';
import { ALL_PROVIDERS_ENV } from './stack';
import type { Stack } from './stack';

/**
 * Runs the real worker entry point as a child process on the stack's task queue, so a test can
 * kill it with SIGKILL mid-flight and start another. Its metrics endpoint is off unless the
 * test gives it a port (test files run in parallel; a fixed port would collide). `env` overrides
 * the rest (a test routes the worker's provider calls through a proxy it can cut).
 */
export function spawnWorker(
  stack: Stack,
  options: {
    metricsPort?: number;
    env?: Record<string, string>;
    /** The line to resolve on; by default the one saying it polls. */
    until?: (line: string) => boolean;
  } = {},
): Promise<ChildEntry> {
  return spawnEntry(
    'worker',
    {
      ...workerEnv(stack),
      WORKER_METRICS_PORT: String(options.metricsPort ?? 0),
      ...options.env,
    },
    options.until ?? ((line) => line.includes('worker polling')),
  );
}

/** The environment of a worker process on the stack's task queue, Temporal and database. */
export function workerEnv(stack: Stack): Record<string, string> {
  const { config } = stack;
  return {
    DATABASE_URL: config.databaseUrl,
    REDIS_URL: config.redisUrl,
    REDIS_KEY_PREFIX: config.redisKeyPrefix,
    TEMPORAL_ADDRESS: config.temporal.address,
    TEMPORAL_TASK_QUEUE: config.temporal.taskQueue,
    SIMULATOR_URL: stack.simulatorUrl,
    SIMULATOR_WEBHOOK_SECRET: config.simulator.webhookSecret,
    API_KEYS: 'unused:unused-secret',
    OPERATOR_KEYS: 'unused:unused-secret',
    // Test files share a database: reconciliation runs only where a test starts it.
    RECONCILE_INTERVAL_SECONDS: '0',
    ...ALL_PROVIDERS_ENV,
  };
}
