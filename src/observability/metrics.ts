import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Every metric the API exposes, created in one place on one registry, so `/metrics` shows all
 * of them and tests can read them without globals.
 */
export function createMetrics(registry = new Registry()) {
  collectDefaultMetrics({ register: registry });
  const counter = (name: string, help: string) =>
    new Counter({ name, help, registers: [registry] });
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
      records: new Gauge({
        name: 'galang_idempotency_records',
        help: 'Records in the LMDB store',
        registers: [registry],
      }),
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
export type IdempotencyMetrics = Metrics['idempotency'];
