import { ProviderRejected } from '../../src/providers/http-json';
import { ProviderUnavailable } from '../../src/providers/payment-provider';
import type { PaymentProvider, WebhookEvent } from '../../src/providers/payment-provider';
import {
  STRIPE_API_VERSION,
  createStripeProvider,
} from '../../src/providers/stripe/stripe-provider';
import { createMidtransProvider } from '../../src/providers/midtrans/midtrans-provider';
import { fakeMidtrans } from '../support/fake-midtrans';
import type { FakeMidtrans } from '../support/fake-midtrans';
import { fakeStripe } from '../support/fake-stripe';
import { createXenditProvider } from '../../src/providers/xendit/xendit-provider';
import { fakeXendit } from '../support/fake-xendit';
import type { FakeXendit } from '../support/fake-xendit';
import type { FakeStripe } from '../support/fake-stripe';

let n = 0;
const payment = (method: string, amount = 50_000, currency = 'IDR') => {
  const reference = `don-${++n}-${Date.now()}`;
  return {
    idempotencyKey: `${reference}-create`,
    donationId: reference,
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

/**
 * The Midtrans adapter against a loopback Core API that answers as docs.midtrans.com documents
 * it, edge cases included: 406 for a repeated order or refund_key, 407 for an expired
 * transaction, 412 for a status that can no longer change, 202 for a refund the bank denies.
 */
describe('midtrans adapter against the fake Core API', () => {
  const SERVER_KEY = 'SB-Mid-server-fake';
  let fake: FakeMidtrans;
  let midtrans: PaymentProvider;
  beforeAll(async () => {
    fake = await fakeMidtrans(SERVER_KEY);
    midtrans = createMidtransProvider({ baseUrl: fake.url, serverKeys: [SERVER_KEY] });
  });
  afterAll(async () => {
    await fake.close();
  });
  const paid = async (amount = 40_000) => {
    const created = await midtrans.createPayment(payment('qris', amount));
    fake.set(created.providerReference, 'settlement');
    return created.providerReference;
  };

  it('charges an order once: a retry answered 406 reads the transaction instead', async () => {
    const request = payment('qris');
    const first = await midtrans.createPayment(request);
    expect(await midtrans.createPayment(request)).toEqual({
      ...first,
      action: expect.objectContaining({ type: 'qr' }) as unknown,
    });
    expect(fake.charges.get(request.donationId)).toBe(1);
    expect(first).toMatchObject({ status: 'PENDING', action: { type: 'qr' } });
    const va = await midtrans.createPayment(payment('bank_transfer'));
    expect(va.action).toEqual({ type: 'virtual_account', value: 'bca:490526303019299' });
  });

  it('refuses another currency and an unknown method instead of charging QRIS', async () => {
    const usd = payment('qris', 500, 'USD');
    const gopay = payment('gopay');
    await expect(midtrans.createPayment(usd)).rejects.toBeInstanceOf(ProviderRejected);
    await expect(midtrans.createPayment(gopay)).rejects.toBeInstanceOf(ProviderRejected);
    // These two orders were never charged (other tests' orders are theirs to count).
    expect(fake.charges.get(usd.donationId)).toBeUndefined();
    expect(fake.charges.get(gopay.donationId)).toBeUndefined();
  });

  it('reads an expired transaction (407) as EXPIRED, and cancel answers what it can', async () => {
    const expired = await midtrans.createPayment(payment('qris'));
    fake.set(expired.providerReference, 'expire');
    expect((await midtrans.fetchPayment(expired.providerReference)).status).toBe('EXPIRED');
    expect(await midtrans.cancel(expired.providerReference)).toMatchObject({
      accepted: true,
      payment: { status: 'EXPIRED' },
    });

    const open = await midtrans.createPayment(payment('qris'));
    expect(await midtrans.cancel(open.providerReference)).toMatchObject({
      accepted: true,
      payment: { status: 'CANCELED' },
    });
    const settled = await paid();
    expect(await midtrans.cancel(settled)).toMatchObject({
      accepted: false,
      payment: { status: 'PAID' },
    });
  });

  it('refunds with a valid refund_key; a retry answered 406 returns the refund it made', async () => {
    const id = await paid();
    await expect(midtrans.refund(refundOf(id, `${id}:refund`, 10_000))).rejects.toBeInstanceOf(
      ProviderRejected,
    );
    fake.refundConfirmation = 'manual';
    try {
      const request = refundOf(id, 'don-1-refund-a', 15_000);
      const first = await midtrans.refund(request);
      expect(first).toMatchObject({ status: 'PENDING', amount: 15_000 });
      expect(await midtrans.refund(request)).toEqual(first);
      expect(fake.refunds.get('don-1-refund-a')).toBe(1);
      const second = await midtrans.refund(refundOf(id, 'don-1-refund-b', 25_000));
      fake.confirmRefund(id, first.refundId);
      expect(await midtrans.fetchPayment(id)).toMatchObject({
        status: 'PAID',
        refunds: [
          { refundId: first.refundId, status: 'SUCCEEDED', amount: 15_000 },
          { refundId: second.refundId, status: 'PENDING', amount: 25_000 },
        ],
      });
      // The bank-confirmed notification names no refund: a hint to read them all.
      fake.confirmRefund(id);
      expect(midtrans.parseWebhook(fake.notification(id), {})).toMatchObject({
        kind: 'hint',
        providerReference: id,
      });
    } finally {
      fake.refundConfirmation = 'immediate';
    }
  });

  it('answers a refund the bank denies (202) as FAILED: the payment stays settled, a retry too', async () => {
    const id = await paid();
    fake.refundOutcome = 'denied';
    try {
      const request = refundOf(id, 'don-2-refund-a', 40_000);
      expect(await midtrans.refund(request)).toMatchObject({ status: 'FAILED' });
      expect(await midtrans.refund(request)).toMatchObject({ status: 'FAILED' });
      expect(await midtrans.fetchPayment(id)).toMatchObject({ status: 'PAID', refunds: [] });
    } finally {
      fake.refundOutcome = 'approved';
    }
  });

  it('verifies its notifications with the server key, as the fake signs them', async () => {
    const id = await paid();
    expect(midtrans.parseWebhook(fake.notification(id), {})).toMatchObject({
      kind: 'payment',
      status: 'PAID',
      providerReference: id,
    });
    fake.set(id, 'chargeback');
    // The notification is a hint; the status read says what was charged back.
    expect(midtrans.parseWebhook(fake.notification(id), {})).toMatchObject({
      kind: 'hint',
      reason: 'chargeback',
      providerReference: id,
    });
    expect((await midtrans.fetchPayment(id)).disputes).toMatchObject([
      { status: 'LOST', amount: 40_000 },
    ]);
  });
});

/**
 * The Xendit adapter against loopback Invoice and Refund APIs that answer as xendit-node and
 * docs.xendit.co describe them: major units, no idempotency on invoices, refunds pending first.
 */
describe('xendit adapter against the fake Invoice and Refund APIs', () => {
  const SECRET = 'xnd_development_fake';
  const TOKEN = 'xendit-callback-token';
  let fake: FakeXendit;
  let xendit: PaymentProvider;
  beforeAll(async () => {
    fake = await fakeXendit(SECRET);
    xendit = createXenditProvider({
      baseUrl: fake.url,
      secretKey: SECRET,
      callbackTokens: [TOKEN],
    });
  });
  afterAll(async () => {
    await fake.close();
  });

  it('sends major units: USD 12.34 is 12.34, not 1234; IDR 50 000 is 50000', async () => {
    const usd = await xendit.createPayment(payment('card', 1234, 'USD'));
    expect(fake.invoice(usd.providerReference)).toMatchObject({ amount: 12.34, currency: 'USD' });
    expect(await xendit.fetchPayment(usd.providerReference)).toMatchObject({
      amount: 1234,
      currency: 'USD',
      status: 'PENDING',
    });
    const idr = await xendit.createPayment(payment('ewallet'));
    expect(fake.invoice(idr.providerReference)).toMatchObject({ amount: 50_000 });
    expect(idr.action).toMatchObject({ type: 'redirect' });
  });

  it('creates one invoice per donation: a retry finds it by external_id', async () => {
    const request = payment('ewallet');
    const first = await xendit.createPayment(request);
    expect(await xendit.createPayment(request)).toEqual(first);
    expect(fake.charges.get(request.donationId)).toBe(1);
  });

  it('expires an unpaid invoice; a paid one is refused (accepted: false)', async () => {
    const open = await xendit.createPayment(payment('ewallet'));
    expect(await xendit.cancel(open.providerReference)).toMatchObject({
      accepted: true,
      payment: { status: 'EXPIRED' },
    });
    expect(await xendit.cancel(open.providerReference)).toMatchObject({
      accepted: true,
      payment: { status: 'EXPIRED' },
    });
    const paid = await xendit.createPayment(payment('ewallet'));
    fake.set(paid.providerReference, 'PAID');
    expect(await xendit.cancel(paid.providerReference)).toMatchObject({
      accepted: false,
      payment: { status: 'PAID' },
    });
  });

  it('refunds with the idempotency-key header: PENDING first, settled later, a repeat answers the same', async () => {
    const paid = await xendit.createPayment(payment('ewallet', 40_000));
    const id = paid.providerReference;
    fake.set(id, 'PAID');
    const request = refundOf(id, `${id}-refund-a`, 15_000);
    const first = await xendit.refund(request);
    expect(first).toMatchObject({ status: 'PENDING', amount: 15_000 });
    expect(await xendit.refund(request)).toEqual(first);
    expect(fake.refunds.get(`${id}-refund-a`)).toBe(1);
    // Xendit takes one pending refund at a time: the next one is retried later.
    await expect(xendit.refund(refundOf(id, `${id}-refund-b`, 10_000))).rejects.toBeInstanceOf(
      ProviderUnavailable,
    );
    fake.settleRefund(first.refundId, 'FAILED');
    const second = await xendit.refund(refundOf(id, `${id}-refund-b`, 10_000));
    fake.settleRefund(second.refundId, 'SUCCEEDED');
    expect((await xendit.fetchPayment(id)).refunds).toEqual([
      { refundId: first.refundId, status: 'FAILED', amount: 15_000 },
      { refundId: second.refundId, status: 'SUCCEEDED', amount: 10_000 },
    ]);
    const headers = { 'x-callback-token': TOKEN };
    expect(xendit.parseWebhook(fake.refundWebhook(first.refundId), headers)).toMatchObject({
      kind: 'refund',
      status: 'FAILED',
      providerReference: id,
    });
    expect(xendit.parseWebhook(fake.refundWebhook(second.refundId), headers)).toMatchObject({
      kind: 'refund',
      status: 'SUCCEEDED',
      amount: 10_000,
    });
    expect(xendit.parseWebhook(fake.invoiceCallback(id), headers)).toMatchObject({
      kind: 'payment',
      status: 'PAID',
      amount: 40_000,
    });
  });

  it('reports bad credentials as final', async () => {
    const wrong = createXenditProvider({
      baseUrl: fake.url,
      secretKey: 'wrong',
      callbackTokens: [TOKEN],
    });
    await expect(wrong.createPayment(payment('ewallet'))).rejects.toBeInstanceOf(ProviderRejected);
  });
});
