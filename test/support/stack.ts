import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { Redis } from 'ioredis';
import { DEV_SIMULATOR_SECRET, loadConfig } from '../../src/config/config';
import type { Config } from '../../src/config/config';
import { createDatabase } from '../../src/db/database';
import type { Db } from '../../src/db/database';
import { buildApp } from '../../src/runtime/api-app';
import { removeStoreFiles } from '../../src/idempotency/claims-location';
import { IdempotencyStore } from '../../src/idempotency/idempotency-store';
import { CampaignRepository } from '../../src/campaigns/campaign-repository';
import { createMidtransProvider } from '../../src/providers/midtrans/midtrans-provider';
import type { PaymentProvider, ProviderRegistry } from '../../src/providers/payment-provider';
import { createSimulatorProvider } from '../../src/providers/simulator/simulator-provider';
import { PaymentSimulator } from '../../src/providers/simulator/simulator-server';
import type { SimulatorKnobs } from '../../src/providers/simulator/simulator-server';
import { createStripeProvider } from '../../src/providers/stripe/stripe-provider';
import { createXenditProvider } from '../../src/providers/xendit/xendit-provider';
import { createTemporalClient } from '../../src/temporal/temporal-client';
import { createDonationWorker } from '../../src/runtime/donation-worker';
import { createServices } from '../../src/runtime/create-services';
import { createMetrics } from '../../src/observability/metrics';
import { testState } from './test-env';
import { closeRedis } from '../../src/db/redis-connection';

export const CLIENT_SECRET = 'secret-a-123';
export const OTHER_CLIENT_SECRET = 'secret-b-123';
export const OPERATOR_SECRET = 'operator-123';
/** The codec role's key (`CODEC_KEYS`): the payload codec endpoint's, and nothing else's. */
export const CODEC_SECRET = 'codec-key-123';

export interface Stack {
  config: Config;
  db: Db;
  redis: Redis;
  app: FastifyInstance;
  apiUrl: string;
  simulator: PaymentSimulator;
  temporal: ReturnType<typeof createTemporalClient>;
  store: IdempotencyStore;
  simulatorUrl: string;
  /** The providers the API and the worker use (the ops CLI's too, in tests). */
  providers: ProviderRegistry;
  /** Stops the in-process worker mid-flight and starts a new one on the same task queue. */
  restartWorker(): Promise<void>;
  stop(): Promise<void>;
}

export interface StackOptions {
  /** Simulator settles payments after this delay; -1 leaves them for the test to settle. */
  autoPayMs?: number;
  paymentTimeoutSeconds?: number;
  /** Another database than the shared one (test/support/own-database.ts). */
  databaseUrl?: string;
  /** Another Temporal server than the shared one (a test that stops its server). */
  temporalAddress?: string;
  /** Extra environment for the config, e.g. a short Temporal request timeout. */
  env?: Record<string, string>;
  /** The worker's own Postgres URL (a test routes it through a proxy it can cut). */
  workerDatabaseUrl?: string;
  /** Start no worker in this process (a test runs it as a child process). */
  noWorker?: boolean;
  /** The API's own Postgres URL and Temporal address (a test cuts them through a proxy). */
  apiDatabaseUrl?: string;
  apiTemporalAddress?: string;
  /** The simulator's port, for an API that calls it at SIMULATOR_URL (the page's "simulate"). */
  simulatorPort?: number;
  /** Knobs for the whole simulator run. */
  simulator?: SimulatorKnobs;
  /** Treat the simulator like Midtrans or Xendit: confirm paid events with its status API. */
  verifyWithProvider?: boolean;
  /** The API's logger (a test collects its lines); none by default. */
  apiLogger?: FastifyServerOptions['logger'];
  /** More providers for the worker and the API (e.g. Stripe on a fake gateway). */
  providers?: ReadonlyMap<string, PaymentProvider>;
  /** The provider new donations use; the simulator by default. */
  defaultProvider?: string;
}

/** Rate limits no test reaches unless it sets its own (test/integration/rate-limits.test.ts). */
export const UNLIMITED = {
  RATE_LIMIT_CLIENT_MAX: '1000000',
  RATE_LIMIT_OPERATOR_MAX: '1000000',
  RATE_LIMIT_PUBLIC_MAX: '1000000',
  RATE_LIMIT_FAILED_AUTH_MAX: '1000000',
};

/** Test credentials of the providers whose webhooks the API verifies in tests. */
export const MIDTRANS_SERVER_KEY = 'SB-Mid-server-test-key';
export const XENDIT_CALLBACK_TOKEN = 'xendit-callback-token-test';
export const STRIPE_WEBHOOK_SECRET = 'whsec_stripe_test_secret';

/**
 * Every provider's credentials, on addresses nothing answers, for an API or worker process of
 * its own on the shared database: other test files leave donations open on each provider, and
 * boot refuses a configuration that would drop one. Their APIs are never called.
 */
export const ALL_PROVIDERS_ENV = {
  MIDTRANS_SERVER_KEYS: MIDTRANS_SERVER_KEY,
  MIDTRANS_BASE_URL: 'http://127.0.0.1:9',
  XENDIT_SECRET_KEY: 'xnd_unreachable',
  XENDIT_CALLBACK_TOKENS: XENDIT_CALLBACK_TOKEN,
  XENDIT_BASE_URL: 'http://127.0.0.1:9',
  STRIPE_SECRET_KEY: 'sk_test_unreachable',
  STRIPE_WEBHOOK_SECRETS: STRIPE_WEBHOOK_SECRET,
  STRIPE_BASE_URL: 'http://127.0.0.1:9',
};

/**
 * The whole pipeline for one test file, on the shared Temporal server and database: the API on
 * a real port, the simulator, and a worker on a task queue of this file's own.
 */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const state = testState();
  const lmdbDir = path.join(os.tmpdir(), `galang-lmdb-${randomUUID()}`);
  const config = loadConfig({
    NODE_ENV: 'test',
    PORT: '0',
    DATABASE_URL: options.databaseUrl ?? state.databaseUrl,
    REDIS_URL: state.redisUrl,
    REDIS_KEY_PREFIX: state.redisKeyPrefix,
    TEMPORAL_ADDRESS: options.temporalAddress ?? state.temporalAddress,
    TEMPORAL_TASK_QUEUE: `test-${randomUUID()}`,
    LMDB_PATH: lmdbDir,
    API_KEYS: `client-a:${CLIENT_SECRET},client-b:${OTHER_CLIENT_SECRET}`,
    OPERATOR_KEYS: `ops:${OPERATOR_SECRET}`,
    CODEC_KEYS: `ui-proxy:${CODEC_SECRET}`,
    PAYMENT_TIMEOUT_SECONDS: String(options.paymentTimeoutSeconds ?? 60),
    SIMULATOR_WEBHOOK_SECRET: DEV_SIMULATOR_SECRET,
    // Test files share one database: a stack redelivers only where a test asks it to, or it
    // would deliver other files' rows through its own Temporal connection.
    INBOX_REDELIVERY_INTERVAL_MS: '3600000',
    ...(options.simulatorPort && { SIMULATOR_URL: `http://127.0.0.1:${options.simulatorPort}` }),
    // Tests that read the payment action from the 202 wait for it on a loaded machine; the
    // PENDING answer past the budget has tests of its own.
    EARLY_RETURN_MS: '15000',
    // Test files share Redis: rate limits only where a test sets its own.
    ...UNLIMITED,
    ...options.env,
  });

  const db = createDatabase({ connectionString: config.databaseUrl, max: 5 });
  const redis = new Redis(config.redisUrl, { keyPrefix: config.redisKeyPrefix });
  const store = new IdempotencyStore({
    path: lmdbDir,
    claimsPath: config.lmdbClaimsPath,
    ttlSeconds: config.idempotencyTtlSeconds,
  });
  const simulator = new PaymentSimulator({
    webhookUrl: 'http://127.0.0.1:1/unset',
    webhookSecret: DEV_SIMULATOR_SECRET,
    autoPayMs: options.autoPayMs ?? 200,
    ...options.simulator,
  });
  const simulatorUrl = await simulator.listen(options.simulatorPort ?? 0);
  const simulatorProvider = createSimulatorProvider({
    baseUrl: simulatorUrl,
    webhookSecrets: [DEV_SIMULATOR_SECRET],
  });
  const providers = new Map<string, PaymentProvider>([
    [
      'simulator',
      { ...simulatorProvider, verifyWithProvider: options.verifyWithProvider ?? false },
    ],
    ...(options.providers ?? []),
  ]);
  // The API also verifies the other providers' webhooks (their APIs are never called here).
  const unreachable = 'http://127.0.0.1:9';
  const apiProviders = new Map<string, PaymentProvider>([
    ...providers,
    [
      'midtrans',
      createMidtransProvider({ baseUrl: unreachable, serverKeys: [MIDTRANS_SERVER_KEY] }),
    ],
    [
      'xendit',
      createXenditProvider({
        baseUrl: unreachable,
        secretKey: 'x',
        callbackTokens: [XENDIT_CALLBACK_TOKEN],
      }),
    ],
    [
      'stripe',
      createStripeProvider({
        baseUrl: unreachable,
        secretKey: 'x',
        webhookSecrets: [STRIPE_WEBHOOK_SECRET],
      }),
    ],
  ]);
  const apiTemporal = createTemporalClient({
    ...config.temporal,
    address: options.apiTemporalAddress ?? config.temporal.address,
  });
  const apiDb = options.apiDatabaseUrl
    ? createDatabase({
        connectionString: options.apiDatabaseUrl,
        max: 5,
        connectionTimeoutMillis: 1_000,
      })
    : db;
  // The webhook intake's own pool, as in production (src/runtime/start-parts.ts).
  const webhookDb = createDatabase({
    connectionString: options.apiDatabaseUrl ?? config.databaseUrl,
    max: config.webhookPoolSize,
    connectionTimeoutMillis: options.apiDatabaseUrl ? 1_000 : undefined,
  });
  const app = await buildApp({
    config,
    db: apiDb,
    webhookDb,
    redis,
    idempotencyStore: store,
    temporal: apiTemporal,
    providers: new Map([...apiProviders, ...providers]),
    defaultProvider: options.defaultProvider ?? 'simulator',
    metrics: createMetrics(),
    logger: options.apiLogger ?? false,
  });
  const apiUrl = await app.listen({ host: '127.0.0.1', port: 0 });
  simulator.webhookUrl = `${apiUrl}/v1/webhooks/simulator`;

  const workerDb = options.workerDatabaseUrl
    ? createDatabase({
        connectionString: options.workerDatabaseUrl,
        max: 5,
        connectionTimeoutMillis: 1_000,
      })
    : db;
  // The worker's own client, as in production: reconciliation starts and describes workflows.
  const workerTemporal = createTemporalClient(config.temporal);
  // Kept so restartWorker can start another worker just like it.
  let workerSetup: Parameters<typeof createDonationWorker>[0] | undefined;
  const createWorker = (setup: Parameters<typeof createDonationWorker>[0]) => {
    workerSetup = setup;
    return createDonationWorker(setup);
  };
  const workerServices = createServices(config, {
    db: workerDb,
    redis,
    temporal: workerTemporal,
    providers,
  });
  let worker = options.noWorker
    ? undefined
    : await createWorker({
        temporal: config.temporal,
        taskQueue: config.temporal.taskQueue,
        workflowBundle: { codePath: state.workflowBundlePath },
        services: workerServices,
        providers,
        config,
      });
  let running = worker?.worker.run();

  return {
    config,
    db,
    redis,
    app,
    apiUrl,
    simulator,
    temporal: apiTemporal,
    store,
    simulatorUrl,
    providers,
    async restartWorker() {
      if (!worker || !workerSetup) throw new Error('This stack runs no worker of its own');
      worker.worker.shutdown();
      await running;
      await worker.connection.close();
      worker = await createDonationWorker(workerSetup);
      running = worker.worker.run();
    },
    /**
     * Stops what feeds the pipeline before what runs it: the API drains its requests while the
     * worker still answers them, then the worker drains its tasks (as the samples do: shutdown,
     * then await run), then the connections, the store and the pools go.
     */
    async stop() {
      await app.close();
      worker?.worker.shutdown();
      await running;
      workerServices.mailSender.close();
      await simulator.close();
      await worker?.connection.close();
      await workerTemporal.connection.close();
      await apiTemporal.connection.close();
      await store.close();
      await closeRedis(redis);
      if (workerDb !== db) await workerDb.destroy();
      if (apiDb !== db) await apiDb.destroy();
      await webhookDb.destroy();
      await db.destroy();
      removeStoreFiles(lmdbDir, config.lmdbClaimsPath);
    },
  };
}

/** Polls until `check` returns a value or the time runs out. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('Condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** A unique campaign for one test, so totals are the test's own. */
export async function createCampaign(
  db: Db,
  overrides: Partial<{ goalAmount: number; currency: string; endsAt: Date | null }> = {},
): Promise<string> {
  const id = `c-${randomUUID().slice(0, 12)}`;
  await new CampaignRepository(db).create({
    id,
    title: `Campaign ${id}`,
    goalAmount: overrides.goalAmount ?? 10_000_000,
    currency: overrides.currency ?? 'IDR',
    endsAt: overrides.endsAt ?? null,
  });
  return id;
}

export function donationBody(campaignId: string, amount = 50_000) {
  return {
    campaignId,
    amount,
    currency: 'IDR',
    donor: { name: 'Ani', email: 'ani@example.com', anonymous: false },
    message: 'Semangat!',
    paymentMethod: 'qris',
  };
}
