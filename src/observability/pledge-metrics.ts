import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';

/** Pledges by status, and the active ones whose newest period ended without money. */
export type PledgeCounts = Record<'ACTIVE' | 'PAUSED' | 'CANCELLED' | 'FAILING', number>;

/**
 * `galang_pledges{status}` on the API's registry, read from Postgres at each scrape (one
 * grouped count), as the reconciliation gauges are: active, paused, cancelled, and failing.
 */
export function registerPledgeMetrics(registry: Registry, read: () => Promise<PledgeCounts>): void {
  if (registry.getSingleMetric('galang_pledges')) return;
  new Gauge({
    name: 'galang_pledges',
    help: 'Pledges by status; failing: active, with the newest period ended without money',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      const counts = await read().catch(() => undefined);
      if (!counts) return;
      for (const [status, n] of Object.entries(counts))
        this.set({ status: status.toLowerCase() }, n);
    },
  });
}
