import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { IdempotencyStore } from '../idempotency/idempotency-store';
import type { IdempotencyMetrics } from '../observability/metrics';
import type { WebhookIntake } from '../webhooks/webhook-intake';

/** Periodic work of an API process. */
export interface BackgroundLoop {
  /** Named in the log line of a failed run. */
  name: string;
  intervalMs: number;
  run(log: FastifyBaseLogger): Promise<unknown>;
}

/** Every API process's loops; each is safe to run in several processes at once. */
export function apiBackgroundLoops(deps: {
  store: IdempotencyStore;
  metrics: IdempotencyMetrics;
  intake: WebhookIntake;
  redeliveryIntervalMs: number;
  sweepIntervalMs?: number;
}): BackgroundLoop[] {
  return [
    {
      // Expiry is enforced at read time anyway: sweeping keeps the data file bounded. Each batch
      // is a transaction that re-reads what it removes.
      name: 'idempotency sweep',
      intervalMs: deps.sweepIntervalMs ?? 60_000,
      async run() {
        const result = await deps.store.sweepAll();
        deps.metrics.swept.inc(result.removed);
        deps.metrics.records.set(deps.store.stats().records);
      },
    },
    {
      // Rows recorded while Temporal was away are delivered once it answers again; a row
      // delivered twice is harmless (the workflow ignores a repeated event).
      name: 'webhook redelivery',
      intervalMs: deps.redeliveryIntervalMs,
      run: (log) => deps.intake.redeliver(log),
    },
  ];
}

/**
 * Runs the loops while the app runs: started when it is ready, stopped when it closes, and the
 * close waits for a run in progress, so no loop touches a store or pool that is closing. A run
 * still going when the next is due is not doubled up; none runs before the process has booted.
 */
export function runBackgroundLoops(
  app: FastifyInstance,
  booted: () => boolean,
  loops: readonly BackgroundLoop[],
): void {
  const timers: NodeJS.Timeout[] = [];
  const inProgress = new Set<Promise<unknown>>();
  app.addHook('onReady', async () => {
    for (const loop of loops) {
      let current: Promise<unknown> | undefined;
      const timer = setInterval(() => {
        if (current || !booted()) return;
        const run = loop
          .run(app.log)
          .catch((error: unknown) => {
            app.log.warn({ err: error }, `${loop.name} failed`);
          })
          .finally(() => {
            inProgress.delete(run);
            current = undefined;
          });
        current = run;
        inProgress.add(run);
      }, loop.intervalMs);
      timer.unref();
      timers.push(timer);
    }
  });
  app.addHook('onClose', async () => {
    for (const timer of timers) clearInterval(timer);
    await Promise.all(inProgress);
  });
}
