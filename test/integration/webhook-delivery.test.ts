import { DEV_SIMULATOR_SECRET } from '../../src/config/config';
import { deriveUuid } from '../../src/idempotency/idempotency-key';
import { signStandardWebhook } from '../../src/providers/standard-webhooks';
import { clientAScope, postDonationUntilAccepted, waitForStatus } from '../support/donations';
import { flakyEndpoint } from '../support/flaky-endpoint';
import { TcpProxy } from '../support/tcp-proxy';
import { createCampaign, donationBody, eventually, startStack } from '../support/stack';
import type { Stack } from '../support/stack';
import { testState } from '../support/test-env';

/** Counts of a campaign's donations by status, and whether its total equals its ledger. */
async function audit(stack: Stack, campaignId: string) {
  const statuses = await stack.db
    .selectFrom('donations')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('campaign_id', '=', campaignId)
    .groupBy('status')
    .execute();
  const ledger = await stack.db
    .selectFrom('donation_ledger')
    .select([
      (eb) => eb.fn.countAll<number>().as('entries'),
      (eb) => eb.fn.coalesce(eb.fn.sum<string>('amount'), eb.val('0')).as('sum'),
    ])
    .where('campaign_id', '=', campaignId)
    .executeTakeFirstOrThrow();
  const totals = await stack.db
    .selectFrom('campaign_totals')
    .select(['confirmed_amount', 'donation_count'])
    .where('campaign_id', '=', campaignId)
    .executeTakeFirstOrThrow();
  return {
    statuses: Object.fromEntries(statuses.map((s) => [s.status, s.n])),
    ledgerEntries: ledger.entries,
    ledgerSum: Number(ledger.sum),
    totals,
  };
}

/**
 * Far past every test here: the deadline's own read of the provider would credit a donation
 * whose webhook never arrived, and these tests are about the webhook.
 */
const NO_DEADLINE = { paymentTimeoutSeconds: 3_600 };

/** Waits until every inbox row of these donations was delivered to its workflow. */
async function allDelivered(stack: Stack, ids: string[], timeoutMs = 60_000) {
  return eventually(async () => {
    const rows = await stack.db
      .selectFrom('webhook_inbox')
      .select(['donation_id', 'processed_at'])
      .where('donation_id', 'in', ids)
      .execute();
    const bound = new Set(rows.map((r) => r.donation_id));
    const done = ids.every((id) => bound.has(id)) && rows.every((r) => r.processed_at !== null);
    return done ? rows : undefined;
  }, timeoutMs);
}

async function donate(stack: Stack, campaignId: string, count: number, prefix: string) {
  const ids: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (next < count) {
        const i = next++;
        const key = `${prefix}-${i}`;
        // A 503 (Temporal slower than the edge waits, on a loaded machine) is retried with the
        // same key, as the contract tells clients to: it must still make one donation.
        const response = await postDonationUntilAccepted(
          stack.apiUrl,
          key,
          donationBody(campaignId, 1_000 + i),
        );
        if (response.status !== 202)
          throw new Error(`donation ${i}: ${response.status} ${await response.text()}`);
        ids.push(deriveUuid(clientAScope(key)));
      }
    }),
  );
  return ids;
}

describe('webhook delivery under adversity', () => {
  it('confirms 500 donations exactly once through duplicates, reordering and a flaky endpoint', async () => {
    const stack = await startStack({
      ...NO_DEADLINE,
      autoPayMs: 50,
      simulator: { duplicates: 3, reorder: true },
    });
    const flaky = await flakyEndpoint(stack.apiUrl, 0.1);
    stack.simulator.webhookUrl = `${flaky.url}/v1/webhooks/simulator`;
    try {
      const campaignId = await createCampaign(stack.db, { goalAmount: 1_000_000_000 });
      const ids = await donate(stack, campaignId, 500, `storm-${Date.now()}`);
      // Alone this takes about 30 s; beside the other Jest worker's heaviest files the
      // simulator's backoff between failed deliveries (to 30 s) stretches it past two minutes.
      await eventually(async () => {
        const { statuses } = await audit(stack, campaignId);
        return statuses.CONFIRMED === 500 ? true : undefined;
      }, 240_000);

      const result = await audit(stack, campaignId);
      const expectedSum = ids.length * 1_000 + (499 * 500) / 2;
      expect(result).toEqual({
        statuses: { CONFIRMED: 500 },
        ledgerEntries: 500,
        ledgerSum: expectedSum,
        totals: { confirmed_amount: expectedSum, donation_count: 500 },
      });
      expect(ids.every((id) => stack.simulator.chargeCount(`${id}:create`) === 1)).toBe(true);
      await allDelivered(stack, ids);
      expect(flaky.failures()).toBeGreaterThan(0);
    } finally {
      await flaky.close();
      await stack.stop();
    }
  }, 300_000);

  it('keeps every event while Temporal is unreachable and delivers them when it is back', async () => {
    const proxy = await TcpProxy.start(testState().temporalAddress);
    const stack = await startStack({
      ...NO_DEADLINE,
      autoPayMs: -1,
      apiTemporalAddress: proxy.address,
      env: { TEMPORAL_REQUEST_TIMEOUT_MS: '1500', INBOX_REDELIVERY_INTERVAL_MS: '300' },
    });
    try {
      const campaignId = await createCampaign(stack.db);
      const ids = await donate(stack, campaignId, 10, `temporal-down-${Date.now()}`);
      proxy.set('refuse');
      for (const id of ids)
        stack.simulator.transition(stack.simulator.paymentByReference(id)?.id ?? '', 'settled');
      const deferred = await eventually(async () => {
        const rows = await stack.db
          .selectFrom('webhook_inbox')
          .select(['processed_at', 'delivery_attempts'])
          .where('donation_id', 'in', ids)
          .execute();
        return rows.length === 10 && rows.every((r) => r.delivery_attempts > 0) ? rows : undefined;
      });
      expect(deferred.every((r) => r.processed_at === null)).toBe(true);
      expect((await audit(stack, campaignId)).statuses).toEqual({ AWAITING_PAYMENT: 10 });

      proxy.set('pass');
      // Redelivered from the inbox: each row delivered, each donation credited by its webhook.
      await allDelivered(stack, ids);
      for (const id of ids) await waitForStatus(stack, id, 'CONFIRMED');
      const result = await audit(stack, campaignId);
      expect(result.ledgerEntries).toBe(10);
      expect(result.totals.confirmed_amount).toBe(result.ledgerSum);
    } finally {
      await stack.stop();
      await proxy.close();
    }
  }, 120_000);

  it('answers 503 while Postgres is unreachable and loses nothing once it returns', async () => {
    const proxy = await TcpProxy.start('127.0.0.1:5432');
    const url = new URL(testState().databaseUrl);
    url.port = String(proxy.port);
    const stack = await startStack({
      ...NO_DEADLINE,
      autoPayMs: -1,
      apiDatabaseUrl: url.toString(),
    });
    try {
      const campaignId = await createCampaign(stack.db);
      const ids = await donate(stack, campaignId, 5, `pg-down-${Date.now()}`);
      proxy.set('refuse');
      const probe = JSON.stringify({ type: 'payment.updated', data: {} });
      const response = await fetch(`${stack.apiUrl}/v1/webhooks/simulator`, {
        method: 'POST',
        body: probe,
        headers: {
          'content-type': 'application/json',
          'webhook-id': 'x',
          'webhook-timestamp': '1',
          'webhook-signature': 'v1,x',
        },
      });
      expect(response.status).toBe(401); // verification needs no database: a forgery is still refused
      const body = JSON.stringify({
        type: 'payment.updated',
        data: {
          id: 'sim_x',
          reference: ids[0],
          status: 'settled',
          amount: 1_000,
          currency: 'IDR',
          occurred_at: new Date().toISOString(),
        },
      });
      const timestamp = Math.floor(Date.now() / 1000);
      const signed = await fetch(`${stack.apiUrl}/v1/webhooks/simulator`, {
        method: 'POST',
        body,
        headers: {
          'content-type': 'application/json',
          'webhook-id': 'msg_pg_down',
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signStandardWebhook(
            DEV_SIMULATOR_SECRET,
            'msg_pg_down',
            timestamp,
            body,
          ),
        },
      });
      expect(signed.status).toBe(503);
      expect(signed.headers.get('retry-after')).toBe('2');
      for (const id of ids)
        stack.simulator.transition(stack.simulator.paymentByReference(id)?.id ?? '', 'settled');
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(
        await stack.db
          .selectFrom('webhook_inbox')
          .selectAll()
          .where('donation_id', 'in', ids)
          .execute(),
      ).toEqual([]);

      proxy.set('pass');
      // The simulator retries the refused notifications; the inbox keeps and delivers them.
      await allDelivered(stack, ids);
      for (const id of ids) await waitForStatus(stack, id, 'CONFIRMED');
      expect((await audit(stack, campaignId)).ledgerEntries).toBe(5);
    } finally {
      await stack.stop();
      await proxy.close();
    }
  }, 120_000);
});
