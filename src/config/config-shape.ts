import type { TemporalConnectionConfig } from '../temporal/temporal-connection';
import type { CodecConfig } from './codec-config';
import type { HttpConfig, RateLimitConfig } from './http-config';
import type { MailConfig } from './mail-config';
import type { PaymentsConfig } from './payments-config';
import type { PledgeConfig } from './pledge-config';
import type { WebhookConfig } from './webhook-config';
import type { WorkerTuning } from './worker-config';

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
  /** Connection (address, namespace, TLS, API key, payload keys: src/config/temporal-config.ts). */
  readonly temporal: TemporalConnectionConfig & {
    readonly taskQueue: string;
    readonly uiPort: number;
    /** The Temporal Web UI, linked from the campaign page. */
    readonly uiUrl: string;
    /** Origins of the Web UI, the only ones the codec endpoint answers across origins. */
    readonly uiOrigins: readonly string[];
    /** How long the edge waits on one Temporal call (a start, a signal) before answering 503. */
    readonly requestTimeoutMs: number;
  };
  readonly earlyReturn: EarlyReturnConfig;
  readonly worker: WorkerTuning;
  readonly http: HttpConfig;
  readonly rateLimits: RateLimitConfig;
  /** Postgres connections of the webhook intake's own pool, which public reads cannot drain. */
  readonly webhookPoolSize: number;
  /** Webhook body limits, the intake's concurrency bound, raw-body retention. */
  readonly webhooks: WebhookConfig;
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
  /** The payload codec endpoint and the codec role's keys (src/config/codec-config.ts). */
  readonly codec: CodecConfig;
  /** Who the ops CLI records as the actor in the audit log (`OPS_ACTOR`; else the OS user). */
  readonly opsActor: string | undefined;
  /** How long a donation waits for the provider's payment before it expires. */
  readonly paymentTimeoutSeconds: number;
  /** How long past the deadline a payment the provider would not close is still checked. */
  readonly settleHorizonSeconds: number;
  /**
   * How many attempts an activity gets through an outage (a provider, Postgres or Temporal
   * away) before it fails for good and its workflow ends where an operator sees it.
   */
  readonly outageRetryAttempts: number;
  /** A payment that succeeded after its donation closed: credit while the campaign is open, or refund. */
  readonly latePaymentPolicy: 'credit' | 'refund';
  readonly simulator: {
    /**
     * Only the simulator's provider, and so its webhook route, exists when it is the provider
     * (or a closing one).
     */
    readonly enabled: boolean;
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
    /**
     * How far back reconciliation reads each payment's record at its provider (refunds and
     * disputes can come this late: Stripe's dispute window is 120 days); 0 reads none.
     */
    readonly providerWindowDays: number;
  };
  readonly logLevel: string;
  /** `pretty` lines for people (pino-pretty, the development default) or JSON for machines. */
  readonly logFormat: 'pretty' | 'json';
  /** The campaign page at `/` and `/campaigns/:id` (src/demo-page/); off in production. */
  readonly demoPage: boolean;
  /** Port of the worker's Prometheus endpoint (Temporal SDK and galang worker metrics); 0: none. */
  readonly workerMetricsPort: number;
  /** SMTP, the sender, the development sink and the organization on receipts. */
  readonly mail: MailConfig;
  readonly pledges: PledgeConfig;
}

/** How long `POST /v1/donations` waits for the payment action before answering PENDING. */
export interface EarlyReturnConfig {
  /** The wait's budget; past it the answer is 202 PENDING and the GET shows the action. */
  readonly budgetMs: number;
  /** Waits a process holds at once; past them a donation is started and answered PENDING. */
  readonly maxInFlight: number;
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
