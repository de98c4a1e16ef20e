import { randomUUID } from 'node:crypto';
import { buildApp } from '../../src/runtime/api-app';
import { createMetrics } from '../../src/observability/metrics';
import { QueryCounter } from '../support/query-counter';
import { startStack } from '../support/stack';
import type { Stack } from '../support/stack';

/** Reads of a campaign that does not exist are answered 404 from memory for a moment. */
describe('unknown campaign ids', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ noWorker: true });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('asks Postgres once for an id it just found missing, then answers 404 from memory', async () => {
    const queries = new QueryCounter();
    const metrics = createMetrics();
    const app = await buildApp({
      config: stack.config,
      db: queries.wrap(stack.db),
      redis: stack.redis,
      idempotencyStore: stack.store,
      temporal: stack.temporal,
      providers: new Map(),
      defaultProvider: 'simulator',
      metrics,
      logger: false,
    });
    try {
      const id = `missing-${randomUUID().slice(0, 8)}`;
      for (let i = 0; i < 20; i++) {
        const response = await app.inject({ url: `/v1/campaigns/${id}/progress` });
        expect(response.statusCode).toBe(404);
        expect(response.json()).toMatchObject({ code: 'campaign-not-found' });
      }
      expect(queries.count('campaign_totals')).toBe(1);
      const { values } = await metrics.progress.requests.get();
      expect(values.find((v) => v.labels.result === 'unknown')?.value).toBe(19);

      // Another missing id still reaches Postgres: the memory is per id.
      await app.inject({ url: `/v1/campaigns/other-${id}/progress` });
      expect(queries.count('campaign_totals')).toBe(2);
    } finally {
      await app.close();
    }
  });
});
