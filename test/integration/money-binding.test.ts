import { randomUUID } from 'node:crypto';
import { postDonation, totalsOf, workflowResult } from '../support/donations';
import {
  inboxRow,
  ledgerOf,
  paymentOf,
  postWebhook,
  rowOf,
  sendSimulatorNotification,
  signalsTo,
  stripeSignature,
} from '../support/money';
import { metricValue } from '../support/reconciliation';
import {
  STRIPE_WEBHOOK_SECRET,
  XENDIT_CALLBACK_TOKEN,
  createCampaign,
  donationBody,
  startStack,
} from '../support/stack';
import type { Stack } from '../support/stack';

/**
 * Issue 12, defect 1: a verified notification counts only for the donation it names if it is of
 * that donation's provider and, once the donation has a payment, of that payment. Anything else
 * is recorded, answered 200, counted and never signalled. The donations here are simulator
 * donations left pending (auto-pay off) while notifications of other payments name them.
 */
describe('payment events bound to their provider and payment', () => {
  let stack: Stack;
  let campaignId: string;

  beforeAll(async () => {
    stack = await startStack({ autoPayMs: -1, paymentTimeoutSeconds: 60 });
  });
  beforeEach(async () => {
    campaignId = await createCampaign(stack.db);
  });
  afterAll(async () => {
    await stack.stop();
  });

  /** A 50 000 IDR simulator donation waiting for its payment; its id and payment's id. */
  async function waitingDonation(): Promise<{ id: string; payment: string }> {
    const response = await postDonation(stack.apiUrl, `bind-${randomUUID()}`, {
      ...donationBody(campaignId, 50_000),
    });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    return { id, payment: await paymentOf(stack, id) };
  }

  const mismatched = async (provider: string) =>
    (await metricValue(stack, `galang_webhooks_mismatched_total{provider="${provider}"}`)) ?? 0;

  /**
   * The event was recorded unbound and marked mismatched, counted once, never signalled, and the
   * donation is still waiting; then its own payment settles and is credited once.
   */
  async function expectRefused(
    donation: { id: string; payment: string },
    provider: string,
    eventKey: string,
    countedBefore: number,
  ) {
    expect(await inboxRow(stack, provider, eventKey)).toMatchObject({
      donation_id: null,
      last_error: 'mismatched',
      processed_at: expect.any(Date) as unknown,
    });
    expect(await mismatched(provider)).toBe(countedBefore + 1);
    expect(await signalsTo(stack, donation.id)).toBe(0);
    expect((await rowOf(stack, donation.id)).status).toBe('AWAITING_PAYMENT');
    expect(await ledgerOf(stack, donation.id)).toEqual([]);

    stack.simulator.transition(donation.payment, 'settled');
    expect(await workflowResult(stack, donation.id)).toMatchObject({
      status: 'CONFIRMED',
      credited: true,
    });
    expect(await ledgerOf(stack, donation.id)).toEqual([
      expect.objectContaining({ entry_type: 'DONATION', amount: 50_000 }),
    ]);
    expect(await totalsOf(stack, campaignId)).toEqual({
      confirmed_amount: 50_000,
      donation_count: 1,
    });
    expect(stack.simulator.chargeCount(`${donation.id}:create`)).toBe(1);
  }

  it('refuses a Stripe payment_intent.succeeded of another PaymentIntent naming the donation', async () => {
    const donation = await waitingDonation();
    const before = await mismatched('stripe');
    const eventKey = `evt_${randomUUID().replaceAll('-', '')}`;
    const body = JSON.stringify({
      id: eventKey,
      object: 'event',
      api_version: '2025-03-31.basil',
      created: Math.floor(Date.now() / 1000),
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type: 'payment_intent.succeeded',
      data: {
        object: {
          id: `pi_${randomUUID().replaceAll('-', '').slice(0, 24)}`,
          object: 'payment_intent',
          // Stripe counts IDR in hundredths: 50 000 rupiah, the donation's own amount.
          amount: 5_000_000,
          amount_received: 5_000_000,
          currency: 'idr',
          status: 'succeeded',
          livemode: false,
          metadata: { donation_id: donation.id },
        },
      },
    });
    const status = await postWebhook(stack, 'stripe', body, {
      'stripe-signature': stripeSignature(STRIPE_WEBHOOK_SECRET, body),
    });
    expect(status).toBe(200);
    await expectRefused(donation, 'stripe', eventKey, before);
  });

  it('refuses a Xendit invoice callback naming the donation as its external_id', async () => {
    const donation = await waitingDonation();
    const before = await mismatched('xendit');
    const invoice = `inv_${randomUUID()}`;
    const now = new Date().toISOString();
    const body = JSON.stringify({
      id: invoice,
      external_id: donation.id,
      user_id: 'user_test',
      status: 'PAID',
      merchant_name: 'galang',
      amount: 50_000,
      paid_amount: 50_000,
      currency: 'IDR',
      payment_method: 'QR_CODE',
      paid_at: now,
      created: now,
      updated: now,
    });
    const status = await postWebhook(stack, 'xendit', body, {
      'x-callback-token': XENDIT_CALLBACK_TOKEN,
    });
    expect(status).toBe(200);
    const recorded = await stack.db
      .selectFrom('webhook_inbox')
      .select('event_key')
      .where('provider', '=', 'xendit')
      .where('event_key', 'like', `${invoice}%`)
      .executeTakeFirstOrThrow();
    await expectRefused(donation, 'xendit', recorded.event_key, before);
  });

  it("refuses the donation's own provider's notification about another payment", async () => {
    const donation = await waitingDonation();
    const before = await mismatched('simulator');
    // Correctly signed by the simulator, naming our donation, about a payment that is not its.
    const { status, eventKey } = await sendSimulatorNotification(stack, {
      type: 'payment.updated',
      data: {
        id: `sim_${randomUUID()}`,
        reference: donation.id,
        status: 'settled',
        amount: 50_000,
        refunded_amount: 0,
        currency: 'IDR',
        occurred_at: new Date().toISOString(),
      },
    });
    expect(status).toBe(200);
    await expectRefused(donation, 'simulator', eventKey, before);
  });
});
