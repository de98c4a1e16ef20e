import { ProviderRejected } from '../../src/providers/http-json';
import { ProviderUnavailable } from '../../src/providers/payment-provider';
import type { PaymentProvider, WebhookEvent } from '../../src/providers/payment-provider';
import {
  STRIPE_API_VERSION,
  createStripeProvider,
} from '../../src/providers/stripe/stripe-provider';
import { fakeStripe } from '../support/fake-stripe';
import type { FakeStripe } from '../support/fake-stripe';

let n = 0;
const payment = (method: string, amount = 50_000, currency = 'IDR') => {
  const reference = `don-${++n}-${Date.now()}`;
  return {
    idempotencyKey: `${reference}-create`,
    reference,
    amount,
    currency,
    method,
    description: 'Donation to demo',
  };
};
const refundOf = (providerReference: string, key: string, amount: number, currency = 'IDR') => ({
  idempotencyKey: key,
  providerReference,
  amount,
  currency,
  reason: 'asked',
});

/**
 * The Stripe adapter, on the official stripe-node client, against a loopback Stripe that
 * answers as Stripe's API reference documents it: form bodies, idempotency keys, list objects,
 * cancel refused for processing intents, pending and failing refunds, disputes.
 */
describe('stripe adapter against the fake Stripe API', () => {
  const WEBHOOK_SECRET = 'whsec_fake_stripe';
  let fake: FakeStripe;
  let stripe: PaymentProvider;
  beforeAll(async () => {
    fake = await fakeStripe('sk_test_fake');
    stripe = createStripeProvider({
      baseUrl: fake.url,
      secretKey: 'sk_test_fake',
      webhookSecrets: [WEBHOOK_SECRET],
    });
  });
  afterAll(async () => {
    await fake.close();
  });
  /** The normalized events of everything the fake did to one intent. */
  const eventsOf = (intentId: string): WebhookEvent[] =>
    fake.events
      .map((e) => {
        const { body, header } = fake.signed(e, WEBHOOK_SECRET);
        return stripe.parseWebhook(body, { 'stripe-signature': header });
      })
      .filter((e) => e.kind !== 'ignored' && e.providerReference === intentId);

  it('creates once per idempotency key, in hundredths of IDR, on the pinned API version', async () => {
    const request = payment('card');
    const first = await stripe.createPayment(request);
    expect(await stripe.createPayment(request)).toEqual(first);
    expect(fake.charges.get(request.idempotencyKey)).toBe(1);
    expect(first).toMatchObject({ status: 'PENDING', action: { type: 'redirect' } });
    expect(await stripe.fetchPayment(first.providerReference)).toEqual({
      providerReference: first.providerReference,
      status: 'PENDING',
      amount: 50_000,
      currency: 'IDR',
      refunds: [],
      disputes: [],
    });
    expect([...fake.apiVersions]).toEqual([STRIPE_API_VERSION]);
  });

  it('retries nothing itself, and reports 409 idempotency_key_in_use as transient', async () => {
    fake.fault({
      path: '/v1/payment_intents',
      status: 409,
      code: 'idempotency_key_in_use',
      type: 'idempotency_error',
    });
    const request = payment('card');
    await expect(stripe.createPayment(request)).rejects.toBeInstanceOf(ProviderUnavailable);
    // Temporal's retry finds the key free and gets the one payment.
    await stripe.createPayment(request);
    expect(fake.charges.get(request.idempotencyKey)).toBe(1);
    fake.fault({ path: '/v1/payment_intents', status: 500, shouldRetry: 'false' });
    await expect(stripe.createPayment(payment('card'))).rejects.toBeInstanceOf(ProviderRejected);
    fake.fault({ path: '/v1/payment_intents', status: 503 });
    await expect(stripe.createPayment(payment('card'))).rejects.toBeInstanceOf(ProviderUnavailable);
  });

  it('refuses a method it does not take, and bad credentials as final', async () => {
    expect(stripe.supports('IDR', 'card')).toBe(true);
    expect(stripe.supports('IDR', 'qris')).toBe(false);
    await expect(stripe.createPayment(payment('qris'))).rejects.toBeInstanceOf(ProviderRejected);
    const wrong = createStripeProvider({
      baseUrl: fake.url,
      secretKey: 'sk_wrong',
      webhookSecrets: ['x'],
    });
    await expect(wrong.createPayment(payment('card'))).rejects.toBeInstanceOf(ProviderRejected);
  });

  it('cancels an unpaid intent; a processing one is refused (accepted: false) and can still succeed', async () => {
    const open = await stripe.createPayment(payment('card'));
    expect(await stripe.cancel(open.providerReference)).toMatchObject({
      accepted: true,
      payment: { status: 'CANCELED' },
    });
    expect((await stripe.cancel(open.providerReference)).accepted).toBe(true);

    const slow = await stripe.createPayment(payment('card'));
    fake.set(slow.providerReference, 'processing');
    expect(await stripe.cancel(slow.providerReference)).toMatchObject({
      accepted: false,
      payment: { status: 'PENDING' },
    });
    fake.set(slow.providerReference, 'succeeded');
    expect(await stripe.cancel(slow.providerReference)).toMatchObject({
      accepted: false,
      payment: { status: 'PAID' },
    });
    expect(eventsOf(slow.providerReference).map((e) => e.kind === 'payment' && e.status)).toEqual([
      'PENDING',
      'PAID',
    ]);
  });

  it('refunds in parts, each idempotent, pending then failed or succeeded, listed by fetchPayment', async () => {
    const paid = await stripe.createPayment(payment('card', 40_000));
    const id = paid.providerReference;
    fake.set(id, 'succeeded');
    fake.refundStartsAs = 'pending';
    try {
      const a = await stripe.refund(refundOf(id, `${id}-refund-a`, 15_000));
      expect(a).toMatchObject({ status: 'PENDING', amount: 15_000 });
      expect(await stripe.refund(refundOf(id, `${id}-refund-a`, 15_000))).toEqual(a);
      expect(fake.refunds.get(`${id}-refund-a`)).toBe(1);
      const b = await stripe.refund(refundOf(id, `${id}-refund-b`, 25_000));
      await expect(stripe.refund(refundOf(id, `${id}-refund-c`, 1))).rejects.toBeInstanceOf(
        ProviderRejected,
      );
      fake.settleRefund(a.refundId, 'succeeded');
      fake.settleRefund(b.refundId, 'failed');
      expect((await stripe.fetchPayment(id)).refunds).toEqual([
        { refundId: a.refundId, status: 'SUCCEEDED', amount: 15_000 },
        { refundId: b.refundId, status: 'FAILED', amount: 25_000 },
      ]);
      // A refund that succeeded can still fail later (its money comes back).
      fake.settleRefund(a.refundId, 'failed');
      const refunds = eventsOf(id).filter((e) => e.kind === 'refund');
      expect(refunds.map((e) => `${e.refundId === a.refundId ? 'a' : 'b'}:${e.status}`)).toEqual([
        'a:PENDING',
        'b:PENDING',
        'a:SUCCEEDED',
        'b:FAILED',
        'a:FAILED',
      ]);
    } finally {
      fake.refundStartsAs = 'succeeded';
    }
  });

  it('reads disputes: open, then won or lost; an inquiry is no dispute', async () => {
    const paid = await stripe.createPayment(payment('card'));
    const id = paid.providerReference;
    fake.set(id, 'succeeded');
    fake.openDispute(id, { inquiry: true });
    expect((await stripe.fetchPayment(id)).disputes).toEqual([]);
    const won = fake.openDispute(id, { amount: 1_000_000 });
    const lost = fake.openDispute(id);
    fake.closeDispute(won, 'won');
    fake.closeDispute(lost, 'lost');
    expect((await stripe.fetchPayment(id)).disputes).toEqual([
      { disputeId: won, status: 'WON', amount: 10_000 },
      { disputeId: lost, status: 'LOST', amount: 50_000 },
    ]);
    const seen = eventsOf(id).filter((e) => e.kind === 'dispute');
    expect(seen.map((e) => `${e.disputeId === won ? 'won' : 'lost'}:${e.status}`)).toEqual([
      'won:OPEN',
      'won:OPEN',
      'lost:OPEN',
      'lost:OPEN',
      'won:WON',
      'won:WON',
      'lost:LOST',
    ]);
  });
});
