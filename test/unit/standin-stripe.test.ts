import Stripe from 'stripe';
import { ProviderUnavailable } from '../../src/providers/payment-provider';
import { createStripeProvider } from '../../src/providers/stripe/stripe-provider';
import { startSink } from '../support/standins/sink';
import { startStripeStandin } from '../support/standins/stripe';
import type { StripeStandin } from '../support/standins/stripe';
import { stripeStandinSignature } from '../support/standins/stripe-objects';

const secretKey = 'sk_test_standin';
const currentSecret = 'whsec_current_endpoint';
const olderSecret = 'whsec_older_endpoint';
let current: Awaited<ReturnType<typeof startSink>>;
let older: Awaited<ReturnType<typeof startSink>>;
let stripe: StripeStandin;
let client: Stripe;
let adapter: ReturnType<typeof createStripeProvider>;

beforeEach(async () => {
  current = await startSink();
  older = await startSink();
  stripe = await startStripeStandin({
    secretKey,
    timeScale: 0,
    endpoints: [
      { url: current.url, secret: currentSecret, apiVersion: '2025-03-31.basil' },
      { url: older.url, secret: olderSecret, apiVersion: '2024-06-20' },
    ],
  });
  client = new Stripe(secretKey, {
    host: '127.0.0.1',
    port: stripe.port,
    protocol: 'http',
    maxNetworkRetries: 0,
    telemetry: false,
  });
  adapter = createStripeProvider({
    baseUrl: stripe.url,
    secretKey,
    webhookSecrets: [currentSecret],
  });
});
afterEach(async () => {
  await stripe.close();
  await current.close();
  await older.close();
});

const settled = () => Promise.all(stripe.notifiers.map((n) => n.settled()));
const types = (sink: typeof current) => sink.bodies<{ type: string }>().map((e) => e.type);
const paidIntent = async (amount = 4_000_000) => {
  const intent = await client.paymentIntents.create({ amount, currency: 'idr' });
  stripe.pay(intent.id);
  return intent;
};

describe('Stripe stand-in against stripe-node and the documented contract', () => {
  test('its Stripe-Signature is the one stripe-node generates for the same secret and time', () => {
    const payload = JSON.stringify({ id: 'evt_1', object: 'event' });
    const ours = stripeStandinSignature(currentSecret, 1_700_000_000, payload);
    const theirs = client.webhooks.generateTestHeaderString({
      payload,
      secret: currentSecret,
      timestamp: 1_700_000_000,
    });
    expect(ours).toBe(theirs);
  });

  test('stripe-node verifies every delivered event, each retry re-signed', async () => {
    current.answer(500, 503);
    await paidIntent();
    await settled();
    for (const delivery of current.received) {
      const event = client.webhooks.constructEvent(
        delivery.body,
        String(delivery.headers['stripe-signature']),
        currentSecret,
      );
      expect(event.object).toBe('event');
    }
    const deliveries = stripe.notifiers[0]?.deliveries ?? [];
    expect(deliveries.every((d) => d.done && d.attempts.at(-1) === 200)).toBe(true);
    expect(deliveries.flatMap((d) => d.attempts).filter((a) => a !== 200)).toEqual([500, 503]);
    expect(types(current)).toContain('payment_intent.succeeded');
  });

  test('Idempotency-Key: replayed within 24 hours, refused with other parameters, new after', async () => {
    const first = await client.paymentIntents.create(
      { amount: 100, currency: 'usd' },
      { idempotencyKey: 'k1' },
    );
    const again = await client.paymentIntents.create(
      { amount: 100, currency: 'usd' },
      { idempotencyKey: 'k1' },
    );
    expect(again.id).toBe(first.id);
    expect(again.lastResponse.headers['idempotent-replayed']).toBe('true');
    await expect(
      client.paymentIntents.create({ amount: 200, currency: 'usd' }, { idempotencyKey: 'k1' }),
    ).rejects.toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    stripe.advanceClock(25 * 3_600_000);
    const later = await client.paymentIntents.create(
      { amount: 100, currency: 'usd' },
      { idempotencyKey: 'k1' },
    );
    expect(later.id).not.toBe(first.id);
  });

  test('refunds and disputes list newest first and page with has_more', async () => {
    const intent = await paidIntent(3_000);
    const made = [];
    for (const amount of [1_000, 1_000, 1_000]) {
      made.push(await client.refunds.create({ payment_intent: intent.id, amount }));
    }
    const first = await client.refunds.list({ payment_intent: intent.id, limit: 2 });
    expect(first.has_more).toBe(true);
    expect(first.data.map((r) => r.id)).toEqual([made[2]?.id, made[1]?.id]);
    const all = await client.refunds
      .list({ payment_intent: intent.id, limit: 2 })
      .autoPagingToArray({ limit: 10 });
    expect(all.map((r) => r.id)).toEqual(made.map((r) => r.id).reverse());
    await expect(
      client.refunds.create({ payment_intent: intent.id, amount: 1 }),
    ).rejects.toMatchObject({
      code: 'charge_already_refunded',
    });
    stripe.openDispute(intent.id);
    const disputes = await client.disputes.list({ payment_intent: intent.id });
    expect(disputes).toMatchObject({
      has_more: false,
      data: [{ amount: 3_000, status: 'needs_response' }],
    });
  });

  test('endpoint versions: refund.* events from 2024-10-28, only charge.refunded before', async () => {
    const intent = await paidIntent();
    const refund = stripe.dashboardRefund(intent.id, 1_500_000);
    stripe.failRefund(refund.id);
    await settled();
    expect(types(current).filter((t) => t.includes('refund'))).toEqual([
      'refund.created',
      'charge.refunded',
      'refund.updated',
      'refund.failed',
    ]);
    expect(types(older).filter((t) => t.includes('refund'))).toEqual([
      'charge.refunded',
      'charge.refund.updated',
    ]);
    const charge = older
      .bodies<{ type: string; data: { object: { amount_refunded: number } } }>()
      .find((e) => e.type === 'charge.refunded');
    expect(charge?.data.object.amount_refunded).toBe(1_500_000);
  });

  test('a processing PaymentIntent cannot be canceled (payment_intent_unexpected_state)', async () => {
    const intent = await client.paymentIntents.create({ amount: 100, currency: 'usd' });
    stripe.processing(intent.id);
    await expect(client.paymentIntents.cancel(intent.id)).rejects.toMatchObject({
      code: 'payment_intent_unexpected_state',
    });
    expect(await adapter.cancel(intent.id)).toMatchObject({
      accepted: false,
      payment: { status: 'PENDING' },
    });
  });

  test("galang's adapter: create, status, refund, dispute, in IDR hundredths", async () => {
    const created = await adapter.createPayment({
      idempotencyKey: 'don-1-create',
      donationId: 'don-1',
      amount: 40_000,
      currency: 'IDR',
      method: 'card',
      description: 'Donation',
    });
    expect(stripe.intent(created.providerReference)).toMatchObject({
      amount: 4_000_000,
      currency: 'idr',
    });
    stripe.pay(created.providerReference);
    const refund = await adapter.refund({
      idempotencyKey: 'don-1-refund',
      providerReference: created.providerReference,
      amount: 15_000,
      currency: 'IDR',
      reason: 'requested',
    });
    expect(refund).toMatchObject({ status: 'SUCCEEDED', amount: 15_000 });
    const dispute = stripe.openDispute(created.providerReference);
    const read = await adapter.fetchPayment(created.providerReference);
    expect(read).toMatchObject({ status: 'PAID', amount: 40_000 });
    expect(read.refunds).toEqual([refund]);
    expect(read.disputes).toEqual([{ disputeId: dispute.id, status: 'OPEN', amount: 40_000 }]);
    stripe.winDispute(dispute.id);
    await settled();
    const reinstated = current.received.find((r) =>
      r.body.includes('charge.dispute.funds_reinstated'),
    );
    const event = adapter.parseWebhook(
      Buffer.from(reinstated?.body ?? ''),
      reinstated?.headers ?? {},
    );
    expect(event).toMatchObject({ kind: 'dispute', status: 'WON', disputeId: dispute.id });
  });

  test('fault knobs: 429 and 5xx are transient for the adapter and change nothing', async () => {
    const intent = await paidIntent();
    stripe.faults.add(
      'GET /v1/payment_intents',
      { kind: 'status', status: 429 },
      { kind: 'status', status: 502 },
    );
    await expect(adapter.fetchPayment(intent.id)).rejects.toBeInstanceOf(ProviderUnavailable);
    await expect(adapter.fetchPayment(intent.id)).rejects.toBeInstanceOf(ProviderUnavailable);
    expect((await adapter.fetchPayment(intent.id)).status).toBe('PAID');
  });
});
