import { createLmdbGauges } from './lmdb-metrics';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Every metric the API exposes, created in one place on one registry, so `/metrics` shows all
 * of them and tests can read them without globals.
 */
export function createMetrics(registry = new Registry()) {
  collectDefaultMetrics({ register: registry });
  const counter = (name: string, help: string) =>
    new Counter({ name, help, registers: [registry] });
  const labelled = <L extends string>(name: string, help: string, labelNames: L[]) =>
    new Counter<L>({ name, help, labelNames, registers: [registry] });
  return {
    registry,
    idempotency: {
      claims: counter('galang_idempotency_claims_total', 'Keys claimed for a first execution'),
      replays: counter('galang_idempotency_replays_total', 'Completed answers replayed'),
      conflicts: counter('galang_idempotency_conflicts_total', 'Requests refused while in flight'),
      mismatches: counter(
        'galang_idempotency_mismatches_total',
        'Keys reused with a different request body',
      ),
      releases: counter(
        'galang_idempotency_releases_total',
        'Claims released after a transient failure',
      ),
      recoveries: counter(
        'galang_idempotency_recoveries_total',
        'Stale claims of dead processes taken over by a retry',
      ),
      swept: counter('galang_idempotency_swept_total', 'Expired records removed by the sweeper'),
      storeWriteFailures: labelled(
        'galang_idempotency_store_write_failures_total',
        'Commits of the idempotency store that failed (a full disk): the request got 503',
        ['environment'],
      ),
      records: new Gauge({
        name: 'galang_idempotency_records',
        help: 'Records in the LMDB store',
        registers: [registry],
      }),
    },
    webhooks: {
      received: labelled('galang_webhooks_received_total', 'Verified notifications', ['provider']),
      duplicates: labelled(
        'galang_webhooks_duplicate_total',
        'Notifications received before (answered 200, not delivered again)',
        ['provider'],
      ),
      rejected: labelled(
        'galang_webhooks_rejected_total',
        'Notifications refused: bad signature, malformed, unknown provider, too large, too many at once',
        ['provider', 'reason'],
      ),
      unknown: labelled(
        'galang_webhooks_unknown_donation_total',
        'Verified notifications about no donation we know',
        ['provider'],
      ),
      mismatched: labelled(
        'galang_webhooks_mismatched_total',
        'Verified notifications naming a donation of another provider or payment (never signalled)',
        ['provider'],
      ),
      needsReview: labelled(
        'galang_webhooks_needs_review_total',
        'Verified notifications recorded but not applied: money may have moved, an operator must act',
        ['provider'],
      ),
      deferred: labelled(
        'galang_webhooks_deferred_total',
        'Deliveries left to the redelivery loop because Temporal was unreachable',
        ['provider'],
      ),
      // Received → signalled, so a slow or stuck Temporal shows before donations expire.
      signalLag: new Histogram({
        name: 'galang_webhook_signal_lag_seconds',
        help: 'Time from receiving a notification to signalling its workflow (redeliveries included)',
        labelNames: ['provider', 'path'] as const,
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
        registers: [registry],
      }),
    },
    // ── HTTP (src/observability/http-metrics-plugin.ts) ──────────────────────────────────
    http: {
      requestDuration: new Histogram({
        name: 'galang_http_request_duration_seconds',
        help: 'HTTP requests by method, route pattern and status code, and how long they took',
        labelNames: ['method', 'route', 'status_code'] as const,
        buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        registers: [registry],
      }),
    },
    // ── The early return of POST /v1/donations (src/donations/donation-service.ts) ───────
    donations: {
      earlyReturns: labelled(
        'galang_donation_early_returns_total',
        'Donations answered with their payment action (action), or PENDING because the wait ' +
          'passed EARLY_RETURN_MS (budget) or EARLY_RETURN_MAX_IN_FLIGHT waits were held (admission)',
        ['outcome'],
      ),
    },
    // ── LMDB idempotency store, read on each scrape (src/observability/lmdb-metrics.ts) ──
    lmdb: createLmdbGauges(registry),
    // ── Campaign progress cache (src/campaigns/progress-service.ts) ──────────────────────
    progress: {
      requests: labelled(
        'galang_progress_requests_total',
        'Campaign progress reads by where the answer came from: local (this process), hit (Redis), ' +
          'stale (Redis, refreshing), miss (rebuilt), bypass (Redis out, read Postgres), last-known, ' +
          'unknown (a campaign Postgres just said does not exist)',
        ['result'],
      ),
      rebuilds: counter(
        'galang_progress_rebuilds_total',
        'Campaign progress values read from Postgres to fill the cache',
      ),
      breakerOpen: new Gauge({
        name: 'galang_progress_cache_breaker_open',
        help: '1 while the circuit breaker keeps reads away from Redis',
        registers: [registry],
      }),
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
export type HttpMetrics = Metrics['http'];
export type IdempotencyMetrics = Metrics['idempotency'];
export type WebhookMetrics = Metrics['webhooks'];
export type ProgressMetrics = Metrics['progress'];
export type DonationMetrics = Metrics['donations'];

/** What reconciliation has recorded in Postgres, as `/metrics` reports it. */
export interface ReconciliationStats {
  repairsTotal: number;
  lastRun: { driftCampaigns: number; finishedAt: Date } | undefined;
}

/**
 * Reconciliation results. Runs happen on a worker, so the values are read from Postgres on each
 * scrape (one query per scrape, shared by the three gauges) and every API process reports the
 * same numbers. If Postgres does not answer, the previous values stay.
 */
export function registerReconciliationMetrics(
  registry: Registry,
  read: () => Promise<ReconciliationStats>,
): void {
  if (registry.getSingleMetric('galang_reconciliation_repairs_total')) return;
  let inFlight: Promise<ReconciliationStats | undefined> | undefined;
  const stats = () =>
    (inFlight ??= read()
      .catch(() => undefined)
      .finally(() => {
        inFlight = undefined;
      }));
  new Gauge({
    name: 'galang_reconciliation_drift_campaigns',
    help: 'Campaigns whose total differed from their ledger in the latest reconciliation run',
    registers: [registry],
    async collect() {
      const lastRun = (await stats())?.lastRun;
      if (lastRun) this.set(lastRun.driftCampaigns);
    },
  });
  new Gauge({
    name: 'galang_reconciliation_repairs_total',
    help: 'Campaign totals repaired by reconciliation, ever',
    registers: [registry],
    async collect() {
      const current = await stats();
      if (current) this.set(current.repairsTotal);
    },
  });
  new Gauge({
    name: 'galang_reconciliation_last_run_timestamp_seconds',
    help: 'When the latest reconciliation run finished (Unix time)',
    registers: [registry],
    async collect() {
      const lastRun = (await stats())?.lastRun;
      if (lastRun) this.set(lastRun.finishedAt.getTime() / 1000);
    },
  });
}
