import { createHash } from 'node:crypto';
import { WebhookRejected } from '../../src/providers/payment-provider';
import {
  createMidtransProvider,
  midtransSignature,
} from '../../src/providers/midtrans/midtrans-provider';
import { midtransSnapshot, midtransTime } from '../../src/providers/midtrans/midtrans-protocol';

const key = 'SB-Mid-server-currentKey';
const previous = 'SB-Mid-server-previousKey';
const midtrans = createMidtransProvider({
  baseUrl: 'http://127.0.0.1:9',
  serverKeys: [key, previous],
});

/** docs.midtrans.com (QRIS): the settlement notification, signed with our test key. */
const settlement = {
  transaction_type: 'on-us',
  transaction_time: '2020-09-29 11:27:33',
  transaction_status: 'settlement',
  transaction_id: '9f07920a-6145-4d1e-9fc2-66e6fd6bc6fc',
  status_message: 'midtrans payment notification',
  status_code: '200',
  settlement_time: '2020-09-29 11:30:44',
  payment_type: 'qris',
  order_id: 'order03',
  merchant_id: 'M099098',
  issuer: 'gopay',
  gross_amount: '275000.00',
  fraud_status: 'accept',
  currency: 'IDR',
  acquirer: 'gopay',
};
/** docs.midtrans.com (Refund Transactions): the partial_refund notification and its refunds[]. */
const partialRefund = {
  status_code: '200',
  status_message: 'midtrans payment notification',
  transaction_id: '249fc620-6017-4540-af7c-5a1c25788f46',
  order_id: 'example-1424936368',
  payment_type: 'credit_card',
  transaction_time: '2021-02-26 14:39:33',
  transaction_status: 'partial_refund',
  fraud_status: 'accept',
  gross_amount: '30000.00',
  refund_amount: '12000.00',
  refunds: [
    {
      refund_chargeback_id: 1,
      refund_amount: '5000.00',
      created_at: '2015-02-27 00:14:20',
      reason: 'some reason',
      refund_key: 'reference1',
      refund_method: 'online',
    },
    {
      refund_chargeback_id: 2,
      refund_amount: '7000.00',
      created_at: '2015-02-28 01:23:15',
      reason: '',
      refund_key: 'reference2',
      refund_method: 'offline',
    },
  ],
};

const signed = (body: Record<string, unknown>, signingKey = key) =>
  Buffer.from(
    JSON.stringify({
      ...body,
      signature_key: midtransSignature(
        String(body.order_id),
        String(body.status_code),
        String(body.gross_amount),
        signingKey,
      ),
    }),
  );
const parse = (body: Record<string, unknown>, signingKey = key) =>
  midtrans.parseWebhook(signed(body, signingKey), {});
const rejection = (fn: () => unknown) => {
  try {
    fn();
    return 'accepted';
  } catch (error) {
    return error instanceof WebhookRejected ? error.reason : 'other';
  }
};

describe('Midtrans notification signature', () => {
  it('is the documented SHA512(order_id + status_code + gross_amount + server key)', () => {
    const expected = createHash('sha512').update(`1111200100000.00${key}`).digest('hex');
    expect(midtransSignature('1111', '200', '100000.00', key)).toBe(expected);
  });

  it('accepts every key of the rotation, refuses others and a tampered amount', () => {
    expect(rejection(() => parse(settlement, previous))).toBe('accepted');
    expect(rejection(() => parse(settlement, 'SB-Mid-server-wrong'))).toBe('signature');
    const tampered = JSON.parse(signed(settlement).toString()) as Record<string, unknown>;
    tampered.gross_amount = '2750000.00';
    expect(rejection(() => midtrans.parseWebhook(Buffer.from(JSON.stringify(tampered)), {}))).toBe(
      'signature',
    );
  });
});

describe('Midtrans notifications, normalized (documented examples)', () => {
  it('QRIS settlement is PAID, keyed by transaction_id, in rupiah, at GMT+7', () => {
    expect(parse(settlement)).toEqual({
      kind: 'payment',
      eventKey: 'order03:200:275000.00:settlement',
      status: 'PAID',
      donationRef: 'order03',
      providerReference: '9f07920a-6145-4d1e-9fc2-66e6fd6bc6fc',
      amount: 275_000,
      currency: 'IDR',
      occurredAt: '2020-09-29T11:27:33+07:00',
    });
  });

  it('expire (status_code 202) is EXPIRED; pending, deny, cancel; capture by fraud status', () => {
    const at = (transaction_status: string, status_code: string, extra = {}) =>
      parse({ ...settlement, transaction_status, status_code, ...extra });
    expect(at('expire', '202')).toMatchObject({ kind: 'payment', status: 'EXPIRED' });
    expect(at('pending', '201')).toMatchObject({ status: 'PENDING' });
    expect(at('deny', '202')).toMatchObject({ status: 'DECLINED' });
    expect(at('cancel', '202')).toMatchObject({ status: 'CANCELED' });
    expect(at('capture', '200', { fraud_status: 'challenge' })).toMatchObject({
      status: 'PENDING',
    });
    expect(at('capture', '200', { fraud_status: 'accept' })).toMatchObject({ status: 'PAID' });
  });

  it('a partial_refund is a hint to read every refund, keyed by their counts', () => {
    // Issue 22 item 11: it names no refund; taking the newest misattributed the first one's.
    expect(parse(partialRefund)).toEqual({
      kind: 'hint',
      donationRef: 'example-1424936368',
      providerReference: '249fc620-6017-4540-af7c-5a1c25788f46',
      eventKey: 'example-1424936368:200:30000.00:partial_refund:2:0',
      reason: 'partial_refund',
    });
    const confirmed = {
      ...partialRefund,
      refunds: partialRefund.refunds.map((r) => ({
        ...r,
        bank_confirmed_at: '2015-02-27 02:30:20',
      })),
    };
    // The second notification (bank confirmed) is a different event.
    expect(parse(confirmed)).toMatchObject({
      kind: 'hint',
      eventKey: 'example-1424936368:200:30000.00:partial_refund:2:2',
    });
  });

  it('chargeback and partial_chargeback are hints: they name no chargeback and no amount', () => {
    expect(parse({ ...partialRefund, transaction_status: 'chargeback' })).toEqual({
      kind: 'hint',
      donationRef: 'example-1424936368',
      providerReference: '249fc620-6017-4540-af7c-5a1c25788f46',
      eventKey: 'example-1424936368:200:30000.00:chargeback',
      reason: 'chargeback',
    });
    expect(parse({ ...settlement, transaction_status: 'partial_chargeback' })).toMatchObject({
      kind: 'hint',
      reason: 'partial_chargeback',
    });
    expect(parse({ ...settlement, transaction_status: 'something_new' })).toEqual({
      kind: 'ignored',
      eventKey: 'order03:200:275000.00:other',
      reason: 'status something_new',
    });
  });

  it('keys what the signature leaves out from a small fixed set, so edited copies are duplicates', () => {
    // Anyone who saw one notification can resend it with every unsigned field changed.
    const keys = new Set<string>();
    const refunds = (n: number, confirmed: number) =>
      Array.from({ length: n }, (_, i) => ({
        refund_chargeback_id: 1000 + i * 7 + n,
        refund_amount: '1.00',
        ...(i < confirmed ? { bank_confirmed_at: '2015-02-27 02:30:20' } : {}),
      }));
    for (let i = 0; i < 500; i++) {
      const event = parse({
        ...settlement,
        transaction_id: `forged-${i}`,
        transaction_status: ['refund', 'partial_refund', `made-up-${i}`, 'settlement'][i % 4],
        fraud_status: `fraud-${i}`,
        refunds: refunds(i % 40, i % 3),
        transaction_time: `2020-09-29 11:${String(i % 60).padStart(2, '0')}:33`,
      });
      keys.add(event.eventKey);
    }
    // settlement, other, and refund / partial_refund by (refunds, confirmed) counted up to 10.
    expect(keys.size).toBeLessThanOrEqual(2 + 2 * 11 * 3);
    expect(keys).toContain('order03:200:275000.00:other');
    expect(keys).toContain('order03:200:275000.00:partial_refund:10:2');
    // Refund entries that are not objects are not counted, and break nothing.
    expect(
      parse({ ...settlement, transaction_status: 'refund', refunds: [null, 7, 'x'] }).eventKey,
    ).toBe('order03:200:275000.00:refund:3:0');
  });

  it('refuses decimals of a rupiah and other currencies as malformed', () => {
    expect(rejection(() => parse({ ...settlement, gross_amount: '275000.50' }))).toBe('malformed');
    expect(rejection(() => parse({ ...settlement, currency: 'USD' }))).toBe('malformed');
    expect(rejection(() => midtrans.parseWebhook(Buffer.from('not json'), {}))).toBe('malformed');
  });
});

describe('Midtrans status reads and capabilities', () => {
  it('a 407 status read is EXPIRED, not an error; refunds[] become refund records', () => {
    expect(
      midtransSnapshot({ ...settlement, status_code: '407', transaction_status: 'expire' }).status,
    ).toBe('EXPIRED');
    expect(midtransSnapshot(partialRefund)).toMatchObject({
      status: 'PAID',
      amount: 30_000,
      refunds: [
        { refundId: '1', status: 'PENDING', amount: 5_000 },
        { refundId: '2', status: 'PENDING', amount: 7_000 },
      ],
      disputes: [],
    });
    expect(midtransTime('2020-09-29 11:27:33')).toBe('2020-09-29T11:27:33+07:00');
  });

  it('takes IDR only, no unknown method, and refunds no virtual-account payment', () => {
    expect(midtrans.supports('IDR', 'qris')).toBe(true);
    expect(midtrans.supports('USD', 'qris')).toBe(false);
    expect(midtrans.supports('IDR', 'gopay')).toBe(false);
    expect(midtrans.refundable('qris')).toBe(true);
    expect(midtrans.refundable('bank_transfer')).toBe(false);
    expect(midtrans.refundable('echannel')).toBe(false);
  });
});
