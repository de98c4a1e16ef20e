import path from 'node:path';
import { defaultClaimsPath } from '../idempotency/claims-location';
import { DEV_CODEC_KEYS, readCodec } from './codec-config';
import { EnvReader } from './env-reader';
import type { Env } from './env-reader';
import { readHttp, readRateLimits } from './http-config';
import { DEV_RECEIPT_TOKEN_SECRETS, readMail } from './mail-config';
import { providerSandboxProblems, readPayments } from './payments-config';
import { readWebhooks } from './webhook-config';
import { productionSecretProblems, sharedSecretProblems } from './production-secrets';
import type { SecretSetting } from './production-secrets';
import { DEV_PAYLOAD_KEYS, readTemporalSecurity } from './temporal-config';
import { readPledges } from './pledge-config';
import type { Config } from './config-shape';
import { readWorker } from './worker-config';

/** What the configuration holds is in config-shape.ts; this module reads and validates it. */
export type { Config, EarlyReturnConfig, ProgressCacheConfig } from './config-shape';

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/** Development defaults, printed at boot by `npm start` so nobody mistakes them for secrets. */
export const DEV_API_KEYS = 'demo-client:demo-secret';
export const DEV_OPERATOR_KEYS = 'demo-operator:operator-secret';
export const DEV_SIMULATOR_SECRET = 'whsec_ZGV2LXNpbXVsYXRvci13ZWJob29rLXNlY3JldA==';

/** Reads and validates the environment. Throws a {@link ConfigError} listing every problem. */
export function loadConfig(source: Env = process.env): Config {
  const problems: string[] = [];
  const reader = new EnvReader(source, problems);

  const env = reader.oneOf('NODE_ENV', ['development', 'test', 'production'], 'development');
  const production = env === 'production';
  const port = reader.port('PORT', 3000);
  const host = reader.string('HOST', '127.0.0.1');
  const dataDir = path.resolve(reader.string('DATA_DIR', '.data'));
  const lmdbPath = path.resolve(reader.string('LMDB_PATH', path.join(dataDir, 'idempotency')));
  const simulatorPort = reader.port('SIMULATOR_PORT', 3100);
  const temporalAddress = reader.string('TEMPORAL_ADDRESS', '127.0.0.1:7233');
  const temporalUiPort = reader.port('TEMPORAL_UI_PORT', 8233);
  const payments = readPayments(reader, problems, production);
  const simulatorEnabled =
    payments.provider === 'simulator' || payments.closing.includes('simulator');

  const apiKeys = reader.keyList('API_KEYS', production ? undefined : DEV_API_KEYS);
  const operatorKeys = reader.keyList('OPERATOR_KEYS', production ? undefined : DEV_OPERATOR_KEYS);
  const codec = readCodec(reader, problems, env, [
    { name: 'OPERATOR_KEYS', keys: operatorKeys },
    { name: 'API_KEYS', keys: apiKeys },
  ]);
  const opsActor = reader.optional('OPS_ACTOR');
  if (opsActor !== undefined && !/^[A-Za-z0-9_.@-]{1,64}$/.test(opsActor)) {
    problems.push('OPS_ACTOR must be 1 to 64 of A-Z a-z 0-9 _ . @ -');
  }
  const webhookSecrets = reader.list(
    'SIMULATOR_WEBHOOK_SECRET',
    production ? undefined : DEV_SIMULATOR_SECRET,
    !simulatorEnabled,
  );
  if (webhookSecrets.some((secret) => !/^whsec_[A-Za-z0-9+/=]+$/.test(secret))) {
    problems.push('SIMULATOR_WEBHOOK_SECRET must be whsec_<base64>, comma-separated when rotating');
  }

  const config: Config = {
    env,
    host,
    port,
    publicUrl: reader.url('PUBLIC_URL', `http://127.0.0.1:${port}`),
    databaseUrl: reader.url('DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/galang'),
    redisUrl: reader.url('REDIS_URL', 'redis://127.0.0.1:6379'),
    redisKeyPrefix: reader.string('REDIS_KEY_PREFIX', 'galang:'),
    temporal: {
      address: temporalAddress,
      namespace: reader.string('TEMPORAL_NAMESPACE', 'default'),
      taskQueue: reader.string('TEMPORAL_TASK_QUEUE', 'donations'),
      uiPort: temporalUiPort,
      uiUrl: reader.url(
        'TEMPORAL_UI_URL',
        `http://${temporalAddress.replace(/:\d+$/, '')}:${temporalUiPort}`,
      ),
      uiOrigins: reader.list(
        'TEMPORAL_UI_ORIGINS',
        `http://127.0.0.1:${temporalUiPort},http://localhost:${temporalUiPort}`,
      ),
      requestTimeoutMs: reader.integer('TEMPORAL_REQUEST_TIMEOUT_MS', 5_000, 100, 60_000),
      ...readTemporalSecurity(reader, problems, production),
    },
    earlyReturn: {
      budgetMs: reader.integer('EARLY_RETURN_MS', 1_500, 0, 60_000),
      maxInFlight: reader.integer('EARLY_RETURN_MAX_IN_FLIGHT', 100, 0, 100_000),
    },
    worker: readWorker(reader, problems),
    http: readHttp(reader, problems, production),
    rateLimits: readRateLimits(reader),
    webhookPoolSize: reader.integer('WEBHOOK_DB_POOL_SIZE', 3, 1, 100),
    webhooks: readWebhooks(reader),
    dataDir,
    lmdbPath,
    lmdbClaimsPath: path.resolve(reader.string('LMDB_CLAIMS_PATH', defaultClaimsPath(lmdbPath))),
    idempotencyTtlSeconds: reader.integer('IDEMPOTENCY_TTL_SECONDS', 86_400, 86_400),
    idempotencyLeaseSeconds: reader.integer('IDEMPOTENCY_LEASE_SECONDS', 30, 1, 3_600),
    apiProcesses: reader.integer('API_PROCESSES', 1, 1, 64),
    apiKeys,
    operatorKeys,
    codec,
    opsActor,
    paymentTimeoutSeconds: reader.integer('PAYMENT_TIMEOUT_SECONDS', 900, 1),
    settleHorizonSeconds: reader.integer('PAYMENT_SETTLE_HORIZON_SECONDS', 86_400, 0),
    // At most a minute apart once the backoff has grown: about a day.
    outageRetryAttempts: reader.integer('OUTAGE_RETRY_ATTEMPTS', 1_440, 1),
    latePaymentPolicy: reader.oneOf('LATE_PAYMENT_POLICY', ['credit', 'refund'] as const, 'credit'),
    simulator: {
      enabled: simulatorEnabled,
      port: simulatorPort,
      url: reader.url('SIMULATOR_URL', `http://127.0.0.1:${simulatorPort}`),
      webhookSecret: webhookSecrets[0] ?? '',
      webhookSecrets,
      webhookUrl: reader.url(
        'SIMULATOR_WEBHOOK_URL',
        `http://127.0.0.1:${port}/v1/webhooks/simulator`,
      ),
      autoPayMs: reader.integer('SIMULATOR_AUTO_PAY_MS', 1500, -1),
    },
    payments,
    inboxRedeliveryIntervalMs: reader.integer('INBOX_REDELIVERY_INTERVAL_MS', 5_000, 100),
    progress: {
      ttlSeconds: reader.integer('PROGRESS_CACHE_TTL_SECONDS', 30, 1, 86_400),
      staleSeconds: reader.integer('PROGRESS_CACHE_STALE_SECONDS', 300, 0, 86_400),
      localTtlMs: reader.integer('PROGRESS_LOCAL_TTL_MS', 1_000, 0, 60_000),
    },
    reconciliation: {
      intervalSeconds: reader.integer('RECONCILE_INTERVAL_SECONDS', 300, 0, 86_400),
      graceSeconds: reader.integer('RECONCILE_GRACE_SECONDS', 300, 0, 86_400),
      providerWindowDays: reader.integer('RECONCILE_PROVIDER_WINDOW_DAYS', 120, 0, 540),
    },
    logLevel: reader.oneOf(
      'LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      env === 'test' ? 'silent' : 'info',
    ),
    workerMetricsPort: reader.port('WORKER_METRICS_PORT', 9464),
    logFormat: reader.oneOf(
      'LOG_FORMAT',
      ['pretty', 'json'],
      env === 'development' ? 'pretty' : 'json',
    ),
    demoPage:
      reader.oneOf('DEMO_PAGE', ['true', 'false'], production ? 'false' : 'true') === 'true',
    mail: readMail(reader, problems, production, dataDir),
    pledges: readPledges(reader, problems, production),
  };

  if (production) {
    if (simulatorEnabled && !reader.boolean('ALLOW_SIMULATOR', false)) {
      problems.push(
        payments.provider === 'simulator'
          ? 'PAYMENT_PROVIDER=simulator moves no money: refused in production unless ALLOW_SIMULATOR=true'
          : 'PROVIDERS_CLOSING=simulator: the simulator moves no money, refused in production unless ALLOW_SIMULATOR=true',
      );
    }
    const sandboxes = providerSandboxProblems(payments);
    if (sandboxes.length > 0 && !reader.boolean('ALLOW_PROVIDER_SANDBOX', false)) {
      problems.push(
        ...sandboxes,
        'Sandbox providers move no money: refused in production unless ALLOW_PROVIDER_SANDBOX=true (a staging deployment)',
      );
    }
    const secrets = productionSecrets(config);
    problems.push(...productionSecretProblems(secrets), ...sharedSecretProblems(secrets));
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
}

/**
 * The secrets production checks: not the development values, long enough where galang issues
 * them, and each in one role only (the providers' and Temporal's are theirs to size).
 */
function productionSecrets(config: Config): SecretSetting[] {
  const secretsOf = (keys: string) => keys.split(',').map((entry) => entry.split(':')[1] ?? '');
  const external = (name: string, secrets: readonly (string | undefined)[]): SecretSetting => ({
    name,
    secrets: secrets.filter((secret) => secret !== undefined),
    dev: [],
    anyLength: true,
  });
  const { midtrans, xendit, stripe } = config.payments;
  return [
    { name: 'API_KEYS', secrets: config.apiKeys, dev: secretsOf(DEV_API_KEYS) },
    { name: 'OPERATOR_KEYS', secrets: config.operatorKeys, dev: secretsOf(DEV_OPERATOR_KEYS) },
    { name: 'CODEC_KEYS', secrets: config.codec.keys, dev: secretsOf(DEV_CODEC_KEYS) },
    {
      name: 'SIMULATOR_WEBHOOK_SECRET',
      secrets: config.simulator.enabled ? config.simulator.webhookSecrets : [],
      dev: [DEV_SIMULATOR_SECRET],
    },
    {
      name: 'TEMPORAL_PAYLOAD_KEYS',
      secrets: new Map(config.temporal.payloadKeys.map(({ id, key }) => [id, key])),
      dev: secretsOf(DEV_PAYLOAD_KEYS),
      anyLength: true,
    },
    {
      name: 'RECEIPT_TOKEN_SECRETS',
      secrets: config.mail.receiptTokenSecrets,
      dev: secretsOf(DEV_RECEIPT_TOKEN_SECRETS),
    },
    { name: 'METRICS_TOKEN', secrets: [config.http.metricsToken ?? []].flat(), dev: [] },
    external('TEMPORAL_API_KEY', [config.temporal.apiKey]),
    external('MIDTRANS_SERVER_KEYS', midtrans?.serverKeys ?? []),
    external('XENDIT_SECRET_KEY', [xendit?.secretKey]),
    external('XENDIT_CALLBACK_TOKENS', xendit?.callbackTokens ?? []),
    external('STRIPE_SECRET_KEY', [stripe?.secretKey]),
    external('STRIPE_WEBHOOK_SECRETS', stripe?.webhookSecrets ?? []),
  ];
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    if (!(value instanceof Map)) {
      for (const child of Object.values(value)) deepFreeze(child);
    }
  }
  return value;
}
