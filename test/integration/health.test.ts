import { randomUUID } from 'node:crypto';
import { DEV_SIMULATOR_SECRET } from '../../src/config/config';
import { signStandardWebhook } from '../../src/providers/standard-webhooks';
import { postDonation } from '../support/donations';
import { TcpProxy } from '../support/tcp-proxy';
import { createCampaign, donationBody, eventually, startStack } from '../support/stack';
import type { Stack, StackOptions } from '../support/stack';
import { testState } from '../support/test-env';

/**
 * Readiness pulls a node only when it cannot do what no other dependency covers for it:
 * record a webhook durably (Postgres) and use its own LMDB. Redis (a cache) or Temporal down
 * degrades it: reported by name, still in rotation, webhooks still recorded.
 */
describe('health and readiness', () => {
  const readyz = (stack: Stack) => stack.app.inject({ method: 'GET', url: '/readyz' });

  /** A stack whose API reaches one dependency through a proxy the test can cut. */
  const withProxy = async (
    upstream: string,
    options: (address: string) => StackOptions,
    run: (stack: Stack, proxy: TcpProxy) => Promise<void>,
  ) => {
    const proxy = await TcpProxy.start(upstream);
    const stack = await startStack(options(proxy.address));
    try {
      await run(stack, proxy);
    } finally {
      await stack.stop();
      await proxy.close();
    }
  };

  /** A signed simulator notification that the donation's payment settled. */
  const settledWebhook = (stack: Stack, donationId: string, paymentId: string) => {
    const body = JSON.stringify({
      type: 'payment.updated',
      data: {
        id: paymentId,
        reference: donationId,
        status: 'settled',
        refunded_amount: 0,
        amount: 50_000,
        currency: 'IDR',
        occurred_at: new Date().toISOString(),
      },
    });
    const id = `msg_${randomUUID()}`;
    const timestamp = Math.floor(Date.now() / 1000);
    return stack.app.inject({
      method: 'POST',
      url: '/v1/webhooks/simulator',
      headers: {
        'content-type': 'application/json',
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signStandardWebhook(DEV_SIMULATOR_SECRET, id, timestamp, body),
      },
      payload: body,
    });
  };

  it('reports each dependency, and Postgres down makes the API unready', async () => {
    const postgres = new URL(testState().databaseUrl);
    await withProxy(
      `${postgres.hostname}:${postgres.port || 5432}`,
      (address) => {
        const url = new URL(testState().databaseUrl);
        url.host = address;
        return { apiDatabaseUrl: url.toString() };
      },
      async (stack, proxy) => {
        expect((await stack.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({
          status: 'ok',
        });
        const ready = await readyz(stack);
        expect(ready.statusCode).toBe(200);
        expect(ready.json()).toEqual({
          status: 'ready',
          checks: { postgres: 'up', redis: 'up', temporal: 'up', lmdb: 'up' },
          degraded: [],
        });

        proxy.set('refuse');
        const unready = await readyz(stack);
        expect(unready.statusCode).toBe(503);
        expect(unready.json()).toEqual({
          status: 'unready',
          checks: { postgres: 'down', redis: 'up', temporal: 'up', lmdb: 'up' },
          degraded: [],
        });
        // Liveness does not depend on dependencies: restarting would not bring Postgres back.
        expect((await stack.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);

        proxy.set('pass');
        expect((await readyz(stack)).statusCode).toBe(200);
      },
    );
  });

  it('stays ready with Redis down: degraded, webhooks recorded, donations taken', async () => {
    await withProxy(
      new URL(testState().redisUrl).host,
      (address) => ({ env: { REDIS_URL: `redis://${address}` } }),
      async (stack, proxy) => {
        const campaignId = await createCampaign(stack.db);
        proxy.set('refuse');
        const ready = await readyz(stack);
        expect(ready.statusCode).toBe(200);
        expect(ready.json()).toEqual({
          status: 'degraded',
          checks: { postgres: 'up', redis: 'down', temporal: 'up', lmdb: 'up' },
          degraded: ['redis'],
        });
        const webhook = await settledWebhook(stack, randomUUID(), `sim_${randomUUID()}`);
        expect(webhook.statusCode).toBe(200);
        const response = await postDonation(
          stack.apiUrl,
          `redis-down-${randomUUID()}`,
          donationBody(campaignId),
        );
        expect(response.status).toBe(202);
        proxy.set('pass');
        await eventually(
          async () =>
            (await readyz(stack)).json<{ status: string }>().status === 'ready' || undefined,
        );
      },
    );
  });

  it('stays ready with Temporal down: degraded, donations 503 with Retry-After, webhooks recorded', async () => {
    await withProxy(
      testState().temporalAddress,
      (address) => ({
        autoPayMs: -1,
        apiTemporalAddress: address,
        env: { EARLY_RETURN_MS: '1000', TEMPORAL_REQUEST_TIMEOUT_MS: '1000' },
      }),
      async (stack, proxy) => {
        const campaignId = await createCampaign(stack.db);
        const accepted = await postDonation(
          stack.apiUrl,
          `temporal-up-${randomUUID()}`,
          donationBody(campaignId),
        );
        expect(accepted.status).toBe(202);
        const { id } = (await accepted.json()) as { id: string };
        const row = await eventually(async () => {
          const found = await stack.db
            .selectFrom('donations')
            .select(['provider_reference'])
            .where('id', '=', id)
            .executeTakeFirst();
          return found?.provider_reference ?? undefined;
        });

        proxy.set('refuse');
        const ready = await readyz(stack);
        expect(ready.statusCode).toBe(200);
        expect(ready.json()).toEqual({
          status: 'degraded',
          checks: { postgres: 'up', redis: 'up', temporal: 'down', lmdb: 'up' },
          degraded: ['temporal'],
        });
        const refused = await postDonation(
          stack.apiUrl,
          `temporal-down-${randomUUID()}`,
          donationBody(campaignId),
        );
        expect(refused.status).toBe(503);
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
        // The provider's notification is recorded all the same, for delivery once Temporal is back.
        const webhook = await settledWebhook(stack, id, row);
        expect(webhook.statusCode).toBe(200);
        const inbox = await stack.db
          .selectFrom('webhook_inbox')
          .select(['processed_at'])
          .where('donation_id', '=', id)
          .execute();
        expect(inbox).toEqual([{ processed_at: null }]);
      },
    );
  });
});
