import type { FastifyBaseLogger } from 'fastify';
import type { IdempotencyMetrics } from '../observability/metrics';
import type { IdempotencyStore } from './idempotency-store';

/**
 * Runs the store's sweep every `intervalMs`. Expiry is enforced at read time anyway; sweeping
 * only keeps the data file bounded. Several processes sweeping one environment is harmless:
 * each batch is a transaction that re-reads what it removes.
 */
export function startIdempotencySweeper(
  store: IdempotencyStore,
  metrics: IdempotencyMetrics,
  log: FastifyBaseLogger,
  intervalMs = 60_000,
): { stop(): void } {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    store
      .sweepAll()
      .then((result) => {
        metrics.swept.inc(result.removed);
        metrics.records.set(store.stats().records);
      })
      .catch((error: unknown) => {
        log.error({ err: error }, 'idempotency sweep failed');
      })
      .finally(() => {
        running = false;
      });
  }, intervalMs);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
    },
  };
}
