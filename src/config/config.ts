import path from 'node:path';
import { defaultClaimsPath } from '../idempotency/claims-location';
import { EnvReader } from './env-reader';
import type { Env } from './env-reader';

/**
 * The whole runtime configuration. It is read from the environment exactly once, validated and
 * frozen at boot; nothing else in the code base reads `process.env`.
 */
export interface Config {
  readonly env: 'development' | 'test' | 'production';
  readonly host: string;
  readonly port: number;
  /** Public base URL used in `Location` headers and printed instructions. */
  readonly publicUrl: string;
  readonly databaseUrl: string;
  readonly redisUrl: string;
  readonly redisKeyPrefix: string;
  readonly temporal: {
    readonly address: string;
    readonly namespace: string;
    readonly taskQueue: string;
    readonly uiPort: number;
    /** The Temporal Web UI, linked from the campaign page. */
    readonly uiUrl: string;
    /** How long the edge waits on Temporal before answering 503. */
    readonly requestTimeoutMs: number;
  };
  readonly dataDir: string;
  readonly lmdbPath: string;
  /** The idempotency claims' LMDB environment: in shared memory unless configured. */
  readonly lmdbClaimsPath: string;
  readonly idempotencyTtlSeconds: number;
  /** How long a request may hold its key IN_FLIGHT before a retry may take over. */
  readonly idempotencyLeaseSeconds: number;
  /** API processes sharing one LMDB environment on this host. */
  readonly apiProcesses: number;
  /** API clients, by client id, with their bearer secrets. */
  readonly apiKeys: ReadonlyMap<string, string>;
  readonly operatorKeys: ReadonlyMap<string, string>;
  /** How long a donation waits for the provider's payment before it expires. */
  readonly paymentTimeoutSeconds: number;
  /** How long past the deadline a payment the provider would not close is still checked. */
  readonly settleHorizonSeconds: number;
  /** A payment that succeeded after its donation closed: credit while the campaign is open, or refund. */
  readonly latePaymentPolicy: 'credit' | 'refund';
  readonly simulator: {
    readonly url: string;
    readonly port: number;
    /** The secret the simulator signs with: the first of `webhookSecrets`. */
    readonly webhookSecret: string;
    /** Every secret galang accepts on simulator webhooks; more than one while rotating. */
    readonly webhookSecrets: readonly string[];
    readonly webhookUrl: string;
    /** Delay before the simulator settles a payment on its own; negative disables auto-pay. */
    readonly autoPayMs: number;
  };
  readonly payments: PaymentsConfig;
  /** How often unprocessed webhook inbox rows are delivered again. */
  readonly inboxRedeliveryIntervalMs: number;
  readonly progress: ProgressCacheConfig;
  readonly reconciliation: {
    /** How often the worker's schedule runs reconciliation; 0 creates no schedule. */
    readonly intervalSeconds: number;
    /**
     * How long past its payment deadline an open donation, and how long after receipt an
     * undelivered webhook, must be before reconciliation acts on it.
     */
    readonly graceSeconds: number;
  };
  readonly logLevel: string;
  /** `pretty` lines for people (pino-pretty, the development default) or JSON for machines. */
  readonly logFormat: 'pretty' | 'json';
  /** The campaign page at `/` and `/campaigns/:id` (src/demo-page/); off in production. */
  readonly demoPage: boolean;
  /** Port of the worker's Prometheus endpoint (Temporal SDK and galang worker metrics); 0: none. */
  readonly workerMetricsPort: number;
}

/** Campaign progress caching: Redis shared by every process, plus a short in-process copy. */
export interface ProgressCacheConfig {
  /** How long a cached value counts as fresh (jittered ±10 % per write). */
  readonly ttlSeconds: number;
  /** How long past that a value may still be served, marked stale, while one caller refreshes. */
  readonly staleSeconds: number;
  /** How long a process answers from its own copy before asking Redis again. */
  readonly localTtlMs: number;
}

export const paymentProviders = ['simulator', 'midtrans', 'xendit', 'stripe'] as const;
export type PaymentProviderName = (typeof paymentProviders)[number];

/** Provider credentials; a provider is available when its credentials are set. */
export interface PaymentsConfig {
  /** The provider new donations use. */
  readonly provider: PaymentProviderName;
  readonly midtrans?: { readonly baseUrl: string; readonly serverKeys: readonly string[] };
  readonly xendit?: {
    readonly baseUrl: string;
    readonly secretKey: string;
    readonly callbackTokens: readonly string[];
  };
  readonly stripe?: {
    readonly baseUrl: string;
    readonly secretKey: string;
    readonly webhookSecrets: readonly string[];
  };
}

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

  const apiKeys = reader.keyList('API_KEYS', production ? undefined : DEV_API_KEYS);
  const operatorKeys = reader.keyList('OPERATOR_KEYS', production ? undefined : DEV_OPERATOR_KEYS);
  const webhookSecrets = reader.list(
    'SIMULATOR_WEBHOOK_SECRET',
    production ? undefined : DEV_SIMULATOR_SECRET,
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
      requestTimeoutMs: reader.integer('TEMPORAL_REQUEST_TIMEOUT_MS', 5_000, 100, 60_000),
    },
    dataDir,
    lmdbPath,
    lmdbClaimsPath: path.resolve(reader.string('LMDB_CLAIMS_PATH', defaultClaimsPath(lmdbPath))),
    idempotencyTtlSeconds: reader.integer('IDEMPOTENCY_TTL_SECONDS', 86_400, 86_400),
    idempotencyLeaseSeconds: reader.integer('IDEMPOTENCY_LEASE_SECONDS', 30, 1, 3_600),
    apiProcesses: reader.integer('API_PROCESSES', 1, 1, 64),
    apiKeys,
    operatorKeys,
    paymentTimeoutSeconds: reader.integer('PAYMENT_TIMEOUT_SECONDS', 900, 1),
    settleHorizonSeconds: reader.integer('PAYMENT_SETTLE_HORIZON_SECONDS', 86_400, 0),
    latePaymentPolicy: reader.oneOf('LATE_PAYMENT_POLICY', ['credit', 'refund'] as const, 'credit'),
    simulator: {
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
    payments: readPayments(reader, problems),
    inboxRedeliveryIntervalMs: reader.integer('INBOX_REDELIVERY_INTERVAL_MS', 5_000, 100),
    progress: {
      ttlSeconds: reader.integer('PROGRESS_CACHE_TTL_SECONDS', 30, 1, 86_400),
      staleSeconds: reader.integer('PROGRESS_CACHE_STALE_SECONDS', 300, 0, 86_400),
      localTtlMs: reader.integer('PROGRESS_LOCAL_TTL_MS', 1_000, 0, 60_000),
    },
    reconciliation: {
      intervalSeconds: reader.integer('RECONCILE_INTERVAL_SECONDS', 300, 0, 86_400),
      graceSeconds: reader.integer('RECONCILE_GRACE_SECONDS', 300, 0, 86_400),
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
  };

  if (problems.length > 0) throw new ConfigError(problems);
  return deepFreeze(config);
}

function readPayments(reader: EnvReader, problems: string[]): PaymentsConfig {
  const provider = reader.oneOf('PAYMENT_PROVIDER', paymentProviders, 'simulator');
  const midtransKeys = reader.list('MIDTRANS_SERVER_KEYS', undefined, true);
  const xenditKey = reader.optional('XENDIT_SECRET_KEY');
  const xenditTokens = reader.list('XENDIT_CALLBACK_TOKENS', undefined, true);
  const stripeKey = reader.optional('STRIPE_SECRET_KEY');
  const stripeSecrets = reader.list('STRIPE_WEBHOOK_SECRETS', undefined, true);
  const payments: PaymentsConfig = {
    provider,
    ...(midtransKeys.length > 0 && {
      midtrans: {
        baseUrl: reader.url('MIDTRANS_BASE_URL', 'https://api.sandbox.midtrans.com'),
        serverKeys: midtransKeys,
      },
    }),
    ...(xenditKey !== undefined && {
      xendit: {
        baseUrl: reader.url('XENDIT_BASE_URL', 'https://api.xendit.co'),
        secretKey: xenditKey,
        callbackTokens: xenditTokens,
      },
    }),
    ...(stripeKey !== undefined && {
      stripe: {
        baseUrl: reader.url('STRIPE_BASE_URL', 'https://api.stripe.com'),
        secretKey: stripeKey,
        webhookSecrets: stripeSecrets,
      },
    }),
  };
  if (provider !== 'simulator' && payments[provider] === undefined) {
    problems.push(`PAYMENT_PROVIDER is ${provider}, but its credentials are not set`);
  }
  if (xenditKey !== undefined && xenditTokens.length === 0) {
    problems.push('XENDIT_CALLBACK_TOKENS is required with XENDIT_SECRET_KEY');
  }
  if (stripeKey !== undefined && stripeSecrets.length === 0) {
    problems.push('STRIPE_WEBHOOK_SECRETS is required with STRIPE_SECRET_KEY');
  }
  return payments;
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
