import Stripe from 'stripe';
import { ProviderRejected } from '../../src/providers/http-json';
import { ProviderUnavailable, WebhookRejected } from '../../src/providers/payment-provider';
import { fromStripeAmount, toStripeAmount } from '../../src/providers/stripe/stripe-amounts';
import { mapStripeError } from '../../src/providers/stripe/stripe-errors';
import { createStripeProvider } from '../../src/providers/stripe/stripe-provider';

const secret = 'whsec_test_current';
const rolled = 'whsec_test_previous';
const now = 1_790_000_000;
const provider = createStripeProvider({
  baseUrl: 'http://127.0.0.1:9',
  secretKey: 'sk_test',
  webhookSecrets: [secret, rolled],
  now: () => now * 1000,
});
const signer = new Stripe('sk_test_signing').webhooks;
const sign = (payload: string, key = secret, timestamp = now) =>
  signer.generateTestHeaderString({ payload, secret: key, timestamp });

/** An event as docs.stripe.com/api/events/object shows it, around one object. */
const event = (type: string, object: Record<string, unknown>) =>
  JSON.stringify({
    id: 'evt_1NG8Du2eZvKYlo2CUI79vXWy',
    object: 'event',
    api_version: '2026-10-28.endive',
    created: now,
    data: { object },
    livemode: false,
    pending_webhooks: 0,
    request: { id: null, idempotency_key: null },
    type,
  });
const intent = (status: string, extra: Record<string, unknown> = {}) => ({
  id: 'pi_3MtwBwLkdIwHu7ix28a3tqPa',
  object: 'payment_intent',
  amount: 5_000_000,
  amount_received: status === 'succeeded' ? 5_000_000 : 0,
  currency: 'idr',
  status,
  metadata: { donation_id: 'don-1' },
  ...extra,
});
const refund = (status: string) => ({
  id: 're_1Nispe2eZvKYlo2Cd31jOCgZ',
  object: 'refund',
  amount: 1_500_000,
  charge: 'ch_1NirD82eZvKYlo2CIvbtLWuY',
  created: now,
  currency: 'idr',
  metadata: {},
  payment_intent: 'pi_3MtwBwLkdIwHu7ix28a3tqPa',
  reason: null,
  status,
});
const dispute = (status: string) => ({
  id: 'du_1MtJUT2eZvKYlo2CNaw2HvEv',
  object: 'dispute',
  amount: 5_000_000,
  balance_transactions: [],
  charge: 'ch_1AZtxr2eZvKYlo2CJDX8whov',
  created: now,
  currency: 'idr',
  payment_intent: 'pi_3MtwBwLkdIwHu7ix28a3tqPa',
  status,
});
const parse = (payload: string, header = sign(payload)) =>
  provider.parseWebhook(Buffer.from(payload), { 'stripe-signature': header });
const rejection = (fn: () => unknown) => {
  try {
    fn();
    return 'accepted';
  } catch (error) {
    return error instanceof WebhookRejected ? error.reason : 'other';
  }
};

describe('Stripe webhook verification (stripe.webhooks.constructEvent)', () => {
  const body = event('payment_intent.succeeded', intent('succeeded'));

  it('accepts a signed event and refuses a wrong secret, a tampered or re-serialized body', () => {
    expect(rejection(() => parse(body))).toBe('accepted');
    expect(rejection(() => parse(body, sign(body, 'whsec_wrong')))).toBe('signature');
    expect(rejection(() => parse(body.replace('5000000', '9000000'), sign(body)))).toBe(
      'signature',
    );
    const reserialized = JSON.stringify(JSON.parse(body), null, 2);
    expect(rejection(() => parse(reserialized, sign(body)))).toBe('signature');
    expect(rejection(() => provider.parseWebhook(Buffer.from(body), {}))).toBe('signature');
  });

  it('refuses a timestamp beyond 300 s and accepts any secret of the rotation', () => {
    expect(rejection(() => parse(body, sign(body, secret, now - 301)))).toBe('signature');
    expect(rejection(() => parse(body, sign(body, secret, now - 299)))).toBe('accepted');
    expect(rejection(() => parse(body, sign(body, rolled)))).toBe('accepted');
    // During a roll Stripe sends one v1 per active secret.
    const both = `${sign(body, 'whsec_other')},v1=${sign(body, rolled).split('v1=')[1] ?? ''}`;
    expect(rejection(() => parse(body, both))).toBe('accepted');
  });
});

describe('Stripe events, normalized', () => {
  it('payment_intent.succeeded is PAID, in rupiah (Stripe counts IDR in hundredths)', () => {
    expect(parse(event('payment_intent.succeeded', intent('succeeded')))).toEqual({
      kind: 'payment',
      eventKey: 'evt_1NG8Du2eZvKYlo2CUI79vXWy',
      status: 'PAID',
      providerReference: 'pi_3MtwBwLkdIwHu7ix28a3tqPa',
      donationRef: 'don-1',
      amount: 50_000,
      currency: 'IDR',
      occurredAt: new Date(now * 1000).toISOString(),
    });
  });

  it('payment_failed is not final (PENDING), processing is PENDING, canceled is CANCELED', () => {
    const failed = intent('requires_payment_method', {
      last_payment_error: { code: 'card_declined' },
    });
    expect(parse(event('payment_intent.payment_failed', failed))).toMatchObject({
      status: 'PENDING',
    });
    expect(parse(event('payment_intent.processing', intent('processing')))).toMatchObject({
      status: 'PENDING',
    });
    expect(parse(event('payment_intent.canceled', intent('canceled')))).toMatchObject({
      status: 'CANCELED',
    });
  });

  it('refund.* and charge.refund.updated are refund events keyed by the refund id', () => {
    expect(parse(event('refund.created', refund('pending')))).toMatchObject({
      kind: 'refund',
      refundId: 're_1Nispe2eZvKYlo2Cd31jOCgZ',
      providerReference: 'pi_3MtwBwLkdIwHu7ix28a3tqPa',
      status: 'PENDING',
      amount: 15_000,
    });
    expect(parse(event('refund.updated', refund('succeeded')))).toMatchObject({
      status: 'SUCCEEDED',
    });
    expect(parse(event('refund.failed', refund('failed')))).toMatchObject({ status: 'FAILED' });
    expect(parse(event('charge.refund.updated', refund('canceled')))).toMatchObject({
      status: 'FAILED',
    });
  });

  it('charge.refunded (cumulative amount_refunded, no refund objects) is a hint to read the intent', () => {
    const charge = {
      id: 'ch_1',
      object: 'charge',
      amount: 5_000_000,
      amount_refunded: 1_500_000,
      currency: 'idr',
      payment_intent: 'pi_1',
      refunded: false,
    };
    expect(parse(event('charge.refunded', charge))).toEqual({
      kind: 'hint',
      eventKey: 'evt_1NG8Du2eZvKYlo2CUI79vXWy',
      providerReference: 'pi_1',
      donationRef: undefined,
      reason: 'charge.refunded',
    });
    const direct = { ...charge, payment_intent: null };
    expect(parse(event('charge.refunded', direct))).toMatchObject({ kind: 'ignored' });
  });

  it('disputes: created and funds_withdrawn OPEN, funds_reinstated WON, closed won/lost', () => {
    const d = (type: string, status: string) => parse(event(type, dispute(status)));
    expect(d('charge.dispute.created', 'needs_response')).toMatchObject({
      kind: 'dispute',
      disputeId: 'du_1MtJUT2eZvKYlo2CNaw2HvEv',
      status: 'OPEN',
      amount: 50_000,
      providerReference: 'pi_3MtwBwLkdIwHu7ix28a3tqPa',
    });
    expect(d('charge.dispute.funds_withdrawn', 'under_review')).toMatchObject({ status: 'OPEN' });
    expect(d('charge.dispute.funds_reinstated', 'won')).toMatchObject({ status: 'WON' });
    expect(d('charge.dispute.closed', 'won')).toMatchObject({ status: 'WON' });
    expect(d('charge.dispute.closed', 'lost')).toMatchObject({ status: 'LOST' });
    // An inquiry withdraws nothing.
    expect(d('charge.dispute.created', 'warning_needs_response')).toMatchObject({
      kind: 'ignored',
    });
    expect(d('charge.dispute.closed', 'warning_closed')).toMatchObject({ kind: 'ignored' });
  });

  it('answers every other event type as ignored, not as a 400 Stripe would retry for days', () => {
    expect(parse(event('customer.created', { id: 'cus_1', object: 'customer' }))).toEqual({
      kind: 'ignored',
      eventKey: 'evt_1NG8Du2eZvKYlo2CUI79vXWy',
      reason: 'event type customer.created',
    });
    expect(parse(event('payment_intent.created', intent('requires_payment_method')))).toMatchObject(
      { kind: 'ignored' },
    );
  });

  it('records for review, never refuses, an amount not whole rupiah or another currency', () => {
    // A 4xx makes Stripe retry for three days and may disable the endpoint (issue 22 item 11).
    const odd = intent('succeeded', { amount: 5_000_050, amount_received: 5_000_050 });
    expect(parse(event('payment_intent.succeeded', odd))).toMatchObject({
      kind: 'ignored',
      needsReview: true,
      reason: expect.stringMatching(/^needs-review: payment_intent.succeeded /) as unknown,
    });
    const foreign = intent('succeeded', { currency: 'xau' });
    expect(parse(event('payment_intent.succeeded', foreign))).toMatchObject({
      kind: 'ignored',
      needsReview: true,
    });
  });
});

describe("Stripe's units", () => {
  it('IDR in hundredths, JPY and KRW whole, two-decimal currencies as they are', () => {
    expect(toStripeAmount(50_000, 'IDR')).toBe(5_000_000);
    expect(fromStripeAmount(5_000_000, 'idr')).toBe(50_000);
    expect(toStripeAmount(500, 'JPY')).toBe(500);
    expect(toStripeAmount(1_000, 'KRW')).toBe(1_000);
    expect(toStripeAmount(1234, 'USD')).toBe(1234);
    expect(() => fromStripeAmount(5_000_001, 'IDR')).toThrow(RangeError);
  });
});

describe('Stripe errors, classified as stripe-node retries them', () => {
  const raw = (statusCode: number, extra: Record<string, unknown> = {}) => ({
    statusCode,
    message: 'm',
    headers: {},
    ...extra,
  });
  const classify = (error: unknown) => {
    const mapped = mapStripeError(error);
    return mapped instanceof ProviderUnavailable
      ? 'transient'
      : mapped instanceof ProviderRejected
        ? `final ${mapped.status}`
        : 'other';
  };

  it('409 idempotency_key_in_use, 429, 5xx and connection errors are transient', () => {
    expect(
      classify(
        new Stripe.errors.StripeIdempotencyError(raw(409, { code: 'idempotency_key_in_use' })),
      ),
    ).toBe('transient');
    expect(classify(new Stripe.errors.StripeRateLimitError(raw(429)))).toBe('transient');
    expect(classify(new Stripe.errors.StripeAPIError(raw(500)))).toBe('transient');
    expect(classify(new Stripe.errors.StripeConnectionError({ message: 'ECONNRESET' }))).toBe(
      'transient',
    );
  });

  it('final 4xx are rejections; the Stripe-Should-Retry header overrides both ways', () => {
    expect(classify(new Stripe.errors.StripeCardError(raw(402, { code: 'card_declined' })))).toBe(
      'final 402',
    );
    expect(classify(new Stripe.errors.StripeInvalidRequestError(raw(400)))).toBe('final 400');
    expect(
      classify(new Stripe.errors.StripeIdempotencyError(raw(400, { type: 'idempotency_error' }))),
    ).toBe('final 400');
    const lock = raw(400, { headers: { 'stripe-should-retry': 'true' } });
    expect(classify(new Stripe.errors.StripeInvalidRequestError(lock))).toBe('transient');
    const replayed = raw(500, { headers: { 'stripe-should-retry': 'false' } });
    expect(classify(new Stripe.errors.StripeAPIError(replayed))).toBe('final 500');
  });
});
