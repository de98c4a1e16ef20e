import { deriveUuid } from '../../src/idempotency/idempotency-key';
import type { PaymentPlan } from '../../src/providers/simulator/simulator-server';
import { clientAScope, postDonation, waitForStatus } from './donations';
import { OPERATOR_SECRET, donationBody } from './stack';
import type { Stack } from './stack';

/** Every row reconciliation could touch for these campaigns, in a comparable order. */
export async function snapshotOf(stack: Stack, campaignIds: string[]) {
  const totals = await stack.db
    .selectFrom('campaign_totals')
    .selectAll()
    .where('campaign_id', 'in', campaignIds)
    .orderBy('campaign_id')
    .execute();
  const ledger = await stack.db
    .selectFrom('donation_ledger')
    .selectAll()
    .where('campaign_id', 'in', campaignIds)
    .orderBy('id')
    .execute();
  const donations = await stack.db
    .selectFrom('donations')
    .selectAll()
    .where('campaign_id', 'in', campaignIds)
    .orderBy('id')
    .execute();
  return { totals, ledger, donations };
}

/** One value of a metric from the API's `/metrics` (undefined when it is not reported). */
export async function metricValue(stack: Stack, name: string): Promise<number | undefined> {
  const text = await (await fetch(`${stack.apiUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

/** Posts a donation with a planned simulator behaviour; returns its id. */
export async function donate(
  stack: Stack,
  campaignId: string,
  amount: number,
  plan: PaymentPlan = {},
): Promise<string> {
  const key = `recon-${Date.now()}-${Math.random()}`;
  const id = deriveUuid(clientAScope(key));
  stack.simulator.plan(id, plan);
  const response = await postDonation(stack.apiUrl, key, donationBody(campaignId, amount));
  if (response.status !== 202) throw new Error(`donation: ${response.status}`);
  return id;
}

/** An operator's refund through the API, waited for until the donation shows it. */
export async function refund(
  stack: Stack,
  donationId: string,
  amount: number,
  status: 'REFUNDED' | 'PARTIALLY_REFUNDED',
): Promise<void> {
  const response = await fetch(`${stack.apiUrl}/v1/donations/${donationId}/refunds`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${OPERATOR_SECRET}`,
      'idempotency-key': `refund-${donationId}`,
      'content-type': 'application/json',
    },
    body: JSON.stringify({ reason: 'test', amount }),
  });
  if (response.status !== 202) throw new Error(`refund: ${response.status}`);
  await waitForStatus(stack, donationId, status);
}

/** Moves a donation's creation back in time, as if its payment deadline passed long ago. */
export async function backdateDonation(stack: Stack, donationId: string): Promise<void> {
  await stack.db
    .updateTable('donations')
    .set({ created_at: new Date(Date.now() - 2 * 3600_000) })
    .where('id', '=', donationId)
    .execute();
}

/** Corrupts a campaign's total (what a bug or a hand edit would leave): its shards sum to this. */
export async function corruptTotal(
  stack: Stack,
  campaignId: string,
  total: { amount: number; count?: number },
): Promise<void> {
  await stack.db.transaction().execute(async (trx) => {
    // A version above the shards' sum, as any write leaves it: caches take the newer value.
    const { version } = await trx
      .selectFrom('campaign_totals')
      .select('version')
      .where('campaign_id', '=', campaignId)
      .executeTakeFirstOrThrow();
    await trx.deleteFrom('campaign_total_shards').where('campaign_id', '=', campaignId).execute();
    await trx
      .insertInto('campaign_total_shards')
      .values({
        campaign_id: campaignId,
        shard: 0,
        confirmed_amount: total.amount,
        ...(total.count === undefined ? {} : { donation_count: total.count }),
        version: version + 1,
      })
      .execute();
  });
}
