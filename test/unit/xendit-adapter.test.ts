import { parseDecimalAmount } from '../../src/money/currency';
import { WebhookRejected } from '../../src/providers/payment-provider';
import { createXenditProvider } from '../../src/providers/xendit/xendit-provider';
import { fromXenditAmount, toXenditAmount } from '../../src/providers/xendit/xendit-protocol';

const xendit = createXenditProvider({
  baseUrl: 'http://127.0.0.1:9',
  secretKey: 'xnd_development_key',
  callbackTokens: ['token-new', 'token-old'],
});
const send = (body: object, token: string | null = 'token-new') =>
  xendit.parseWebhook(
    Buffer.from(JSON.stringify(body)),
    token === null ? {} : { 'x-callback-token': token },
  );
const rejection = (fn: () => unknown) => {
  try {
    fn();
    return 'accepted';
  } catch (error) {
    return error instanceof WebhookRejected ? error.reason : 'other';
  }
};

/** An invoice callback with the fields of xendit-node's InvoiceCallback model. */
const invoicePaid = {
  id: '579c8d61f23fa4ca35e52da4',
  external_id: 'don-1',
  user_id: '5781d19b2e2385880609791c',
  is_high: true,
  payment_method: 'BANK_TRANSFER',
  status: 'PAID',
  merchant_name: 'galang',
  amount: 50000,
  paid_amount: 50000,
  bank_code: 'PERMATA',
  paid_at: '2016-10-12T08:15:03.404Z',
  payer_email: 'donor@example.com',
  description: 'Donation',
  created: '2016-10-10T08:15:03.404Z',
  updated: '2016-10-10T08:15:03.404Z',
  currency: 'IDR',
  payment_channel: 'PERMATA',
  payment_destination: '888888888888',
};
/** docs.xendit.co, Refund webhook notification: the refund.succeeded example as documented. */
const refundSucceeded = {
  event: 'refund.succeeded',
  business_id: '6094fa76c2fd53701b8e079c',
  created: '2021-12-02T14:52:21.566Z',
  data: {
    event: 'refund.succeeded',
    business_id: '5f27a14a9bf05c73dd040bc8',
    created: '2020-08-29T09:12:33.001Z',
    data: {
      id: 'rfd-6f4a377d-a201-437f-9119-f8b00cbbe857',
      payment_id: 'ddpy-3cd658ae-25b9-4659-aa36-596ae41a809f',
      invoice_id: null,
      amount: '10000',
      payment_method_type: 'DIRECT_DEBIT',
      channel_code: 'BPI',
      currency: 'PHP',
      status: 'SUCCEEDED',
      reason: 'CANCELLATION',
      reference_id: 'b2756a1e-e6cd-4352-9a68-0483aa2b6a2',
      failure_code: null,
      refund_fee_amount: null,
      created: '2020-08-30T09:12:33.001Z',
      updated: '2020-08-30T09:12:33.001Z',
      metadata: null,
    },
  },
};

describe('Xendit callback token', () => {
  it('accepts every token of the rotation, refuses a wrong, a shorter and a missing one', () => {
    expect(rejection(() => send(invoicePaid, 'token-new'))).toBe('accepted');
    expect(rejection(() => send(invoicePaid, 'token-old'))).toBe('accepted');
    expect(rejection(() => send(invoicePaid, 'token-ne'))).toBe('signature');
    expect(rejection(() => send(invoicePaid, 'token-new-and-more'))).toBe('signature');
    expect(rejection(() => send(invoicePaid, null))).toBe('signature');
  });
});

describe('Xendit invoice callbacks, in major units', () => {
  it('PAID and SETTLED are PAID; EXPIRED is EXPIRED; keyed by the invoice id', () => {
    expect(send(invoicePaid)).toEqual({
      kind: 'payment',
      eventKey: '579c8d61f23fa4ca35e52da4:PAID',
      status: 'PAID',
      providerReference: '579c8d61f23fa4ca35e52da4',
      donationRef: 'don-1',
      amount: 50_000,
      currency: 'IDR',
      occurredAt: '2016-10-12T08:15:03.404Z',
    });
    expect(send({ ...invoicePaid, status: 'SETTLED' })).toMatchObject({ status: 'PAID' });
    expect(send({ ...invoicePaid, status: 'EXPIRED', paid_amount: undefined })).toMatchObject({
      status: 'EXPIRED',
    });
    expect(send({ ...invoicePaid, status: 'SOMETHING_NEW' })).toMatchObject({ kind: 'ignored' });
  });

  it('accepts decimals: USD 12.34 is 1234 cents, not refused as before', () => {
    expect(
      send({ ...invoicePaid, currency: 'USD', amount: 12.34, paid_amount: 12.34 }),
    ).toMatchObject({
      amount: 1234,
      currency: 'USD',
    });
    // A fraction below the currency's minor unit is refused rather than rounded.
    expect(rejection(() => send({ ...invoicePaid, amount: 50000.5, paid_amount: 50000.5 }))).toBe(
      'malformed',
    );
  });
});

describe('Xendit refund webhooks', () => {
  it('reads the documented example (nested envelope, amount as a string) as a refund event', () => {
    expect(send(refundSucceeded)).toEqual({
      kind: 'refund',
      eventKey: 'rfd-6f4a377d-a201-437f-9119-f8b00cbbe857:SUCCEEDED',
      refundId: 'rfd-6f4a377d-a201-437f-9119-f8b00cbbe857',
      status: 'SUCCEEDED',
      providerReference: 'ddpy-3cd658ae-25b9-4659-aa36-596ae41a809f',
      donationRef: undefined,
      amount: 1_000_000,
      currency: 'PHP',
      occurredAt: '2020-08-30T09:12:33.001Z',
    });
  });

  it('refund.failed is FAILED; an invoice refund is bound to the invoice id', () => {
    const failed = {
      event: 'refund.failed',
      business_id: 'b',
      created: '2026-01-01T00:00:00Z',
      data: {
        ...refundSucceeded.data.data,
        invoice_id: '579c8d61f23fa4ca35e52da4',
        status: 'FAILED',
        currency: 'IDR',
        amount: 15000,
      },
    };
    expect(send(failed)).toMatchObject({
      status: 'FAILED',
      providerReference: '579c8d61f23fa4ca35e52da4',
      amount: 15_000,
    });
  });

  it('records webhooks of other products (payouts) as ignored', () => {
    expect(send({ event: 'payout.succeeded', id: 'disb-1' })).toEqual({
      kind: 'ignored',
      eventKey: 'payout.succeeded:disb-1',
      reason: 'event payout.succeeded',
    });
  });
});

/** apidocs/dispute-webhook-notifications.md, the dispute.action_required example (abridged). */
const disputeRaised = {
  event: 'dispute.action_required',
  id: 'mi-dspt-f44d259f-fd9d-4de9-80de-1eef3f1506b7',
  channel_code: 'CARDS',
  card_brands: 'VISA',
  status: 'ACTION_REQUIRED',
  currency: 'USD',
  amount: { initial: '1000.00', terminal: null },
  created_at: '2026-03-01T19:50:51.724Z',
  updated_at: '2026-03-01T19:50:51.724Z',
  due_date: '2026-03-15T19:50:51.724Z',
  related_disputes: [],
  payment_id: 'py-59a3cf39-2a7d-4733-a3e3-8177c78090f7',
  reference_id: 'ref-123456',
};

/** The reason of an event that must come out ignored. */
const reasonOf = (body: object) => {
  const event = send(body);
  if (event.kind !== 'ignored') throw new Error(`not ignored: ${event.kind}`);
  return event.reason;
};

describe('Xendit dispute webhooks (issue 22 item 6)', () => {
  it('are recorded as needs-review with what they say: the docs bind them to no invoice', () => {
    expect(send(disputeRaised)).toEqual({
      kind: 'ignored',
      eventKey:
        'dispute.action_required:mi-dspt-f44d259f-fd9d-4de9-80de-1eef3f1506b7:2026-03-01T19:50:51.724Z',
      reason:
        'needs-review: Xendit dispute mi-dspt-f44d259f-fd9d-4de9-80de-1eef3f1506b7 ACTION_REQUIRED' +
        ' (dispute.action_required) USD 1000.00 on payment' +
        ' py-59a3cf39-2a7d-4733-a3e3-8177c78090f7 (reference ref-123456):' +
        ' the docs bind no invoice id to it',
      needsReview: true,
    });
  });

  it('every documented dispute event, and one missing its fields, needs review', () => {
    const lost = {
      ...disputeRaised,
      event: 'dispute.lost',
      status: 'LOST',
      status_reason: 'EXCEEDED_DEADLINE',
      amount: { initial: '1000.00', terminal: '800.00' },
      updated_at: '2026-03-20T14:00:00Z',
    };
    expect(send(lost)).toMatchObject({
      kind: 'ignored',
      eventKey: `dispute.lost:${disputeRaised.id}:2026-03-20T14:00:00Z`,
    });
    expect(reasonOf(lost)).toContain('LOST (dispute.lost) USD 1000.00→800.00');
    for (const event of ['under_review', 'won', 'due_date_approaching', 'something_new']) {
      expect(reasonOf({ ...disputeRaised, event: `dispute.${event}` })).toMatch(/^needs-review: /);
    }
    expect(reasonOf({ event: 'dispute.won' })).toMatch(/^needs-review: Xendit dispute \? \?/);
  });
});

describe('Xendit amounts and capabilities', () => {
  it('converts minor units to major and back exactly', () => {
    expect(toXenditAmount(50_000, 'IDR')).toBe(50_000);
    expect(toXenditAmount(1234, 'USD')).toBe(12.34);
    expect(toXenditAmount(5, 'USD')).toBe(0.05);
    expect(fromXenditAmount(12.34, 'USD')).toBe(1234);
    expect(fromXenditAmount('10000', 'PHP')).toBe(1_000_000);
    expect(fromXenditAmount(12.345, 'USD')).toBeUndefined();
    expect(parseDecimalAmount('50000.00', 'IDR')).toBe(50_000);
    expect(parseDecimalAmount('1e5', 'IDR')).toBeUndefined();
  });

  it('takes the invoice currencies galang counts in; refunds card and e-wallet payments only', () => {
    expect(xendit.supports('USD', 'card')).toBe(true);
    expect(xendit.supports('EUR', 'card')).toBe(false);
    expect(xendit.supports('IDR', 'cash')).toBe(false);
    expect(xendit.refundable('ewallet')).toBe(true);
    expect(xendit.refundable('bank_transfer')).toBe(false);
  });
});
