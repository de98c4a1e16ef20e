import path from 'node:path';

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
    /** How long the edge waits on Temporal before answering 503. */
    readonly requestTimeoutMs: number;
  };
  readonly dataDir: string;
  readonly lmdbPath: string;
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
  readonly logLevel: string;
  /** Port of the worker's Prometheus endpoint (Temporal SDK and galang worker metrics); 0: none. */
  readonly workerMetricsPort: number;
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

type Env = Readonly<Record<string, string | undefined>>;

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
  const simulatorPort = reader.port('SIMULATOR_PORT', 3100);

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
      address: reader.string('TEMPORAL_ADDRESS', '127.0.0.1:7233'),
      namespace: reader.string('TEMPORAL_NAMESPACE', 'default'),
      taskQueue: reader.string('TEMPORAL_TASK_QUEUE', 'donations'),
      uiPort: reader.port('TEMPORAL_UI_PORT', 8233),
      requestTimeoutMs: reader.integer('TEMPORAL_REQUEST_TIMEOUT_MS', 5_000, 100, 60_000),
    },
    dataDir,
    lmdbPath: path.resolve(reader.string('LMDB_PATH', path.join(dataDir, 'idempotency'))),
    idempotencyTtlSeconds: reader.integer('IDEMPOTENCY_TTL_SECONDS', 86_400, 86_400),
    idempotencyLeaseSeconds: reader.integer('IDEMPOTENCY_LEASE_SECONDS', 30, 1, 3_600),
    apiProcesses: reader.integer('API_PROCESSES', 1, 1, 64),
    apiKeys,
    operatorKeys,
    paymentTimeoutSeconds: reader.integer('PAYMENT_TIMEOUT_SECONDS', 900, 1),
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
    logLevel: reader.oneOf(
      'LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'],
      env === 'test' ? 'silent' : 'info',
    ),
    workerMetricsPort: reader.port('WORKER_METRICS_PORT', 9464),
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

class EnvReader {
  constructor(
    private readonly source: Env,
    private readonly problems: string[],
  ) {}

  private raw(name: string): string | undefined {
    const value = this.source[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  }

  string(name: string, fallback: string): string;
  string(name: string, fallback: string | undefined): string | undefined;
  string(name: string, fallback: string | undefined): string | undefined {
    const value = this.raw(name) ?? fallback;
    if (value === undefined) this.problems.push(`${name} is required`);
    return value;
  }

  optional(name: string): string | undefined {
    return this.raw(name);
  }

  /** A comma-separated list; several secrets are active at once while rotating. */
  list(name: string, fallback: string | undefined, optional = false): string[] {
    const value = this.raw(name) ?? fallback;
    if (value === undefined) {
      if (!optional) this.problems.push(`${name} is required`);
      return [];
    }
    return value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item.length > 0);
  }

  integer(name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
    const raw = this.raw(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!/^-?\d+$/.test(raw) || value < min || value > max) {
      this.problems.push(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
      return fallback;
    }
    return value;
  }

  port(name: string, fallback: number): number {
    return this.integer(name, fallback, 0, 65_535);
  }

  url(name: string, fallback: string): string {
    const value = this.raw(name) ?? fallback;
    try {
      new URL(value);
    } catch {
      this.problems.push(`${name} must be a URL, got "${value}"`);
    }
    return value;
  }

  oneOf<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.raw(name) ?? fallback;
    if (!(allowed as readonly string[]).includes(value)) {
      this.problems.push(`${name} must be one of ${allowed.join(', ')}, got "${value}"`);
      return fallback;
    }
    return value as T;
  }

  /** Parses `id:secret,id:secret`; secrets shorter than 8 characters are refused. */
  keyList(name: string, fallback: string | undefined): ReadonlyMap<string, string> {
    const raw = this.raw(name) ?? fallback;
    const keys = new Map<string, string>();
    if (raw === undefined) {
      this.problems.push(`${name} is required (id:secret,id:secret)`);
      return keys;
    }
    for (const entry of raw.split(',')) {
      const [id, secret, ...rest] = entry.trim().split(':');
      if (!id || !secret || rest.length > 0 || !/^[A-Za-z0-9_.-]{1,64}$/.test(id)) {
        this.problems.push(`${name} entries must be id:secret with a [A-Za-z0-9_.-] id`);
      } else if (secret.length < 8) {
        this.problems.push(`${name}: the secret of "${id}" must have at least 8 characters`);
      } else if (keys.has(id)) {
        this.problems.push(`${name}: "${id}" is listed twice`);
      } else {
        keys.set(id, secret);
      }
    }
    return keys;
  }
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
