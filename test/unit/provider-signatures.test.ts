import { createHash } from 'node:crypto';
import { WebhookRejected } from '../../src/providers/payment-provider';
import type { PaymentProvider } from '../../src/providers/payment-provider';
import {
  createMidtransProvider,
  midtransSignature,
} from '../../src/providers/midtrans/midtrans-provider';
import { createXenditProvider } from '../../src/providers/xendit/xendit-provider';
import { parseDecimalAmount } from '../../src/money/currency';

const rejection = (fn: () => unknown) => {
  try {
    fn();
    return 'accepted';
  } catch (error) {
    return error instanceof WebhookRejected ? error.reason : 'other';
  }
};

describe('Midtrans notification signature', () => {
  const key = 'SB-Mid-server-currentKey';
  const previous = 'SB-Mid-server-previousKey';
  const provider: PaymentProvider = createMidtransProvider({
    baseUrl: 'http://127.0.0.1:1',
    serverKeys: [key, previous],
  });
  const notification = (signingKey: string, overrides: Record<string, string> = {}) => {
    const body = {
      transaction_time: '2026-11-30 10:00:00',
      transaction_status: 'settlement',
      transaction_id: 'b7b8c5b3-0d6d-4c4b-8a3e-1f5f2d7a9c10',
      status_code: '200',
      payment_type: 'qris',
      order_id: '1b4e28ba-2fa1-81d2-883f-0016d3cca427',
      gross_amount: '50000.00',
      currency: 'IDR',
      fraud_status: 'accept',
      ...overrides,
    };
    return {
      ...body,
      signature_key: midtransSignature(
        body.order_id,
        body.status_code,
        body.gross_amount,
        signingKey,
      ),
    };
  };

  it('follows the documented formula: SHA-512 hex of order_id + status_code + gross_amount + server key', () => {
    const expected = createHash('sha512').update(`order-1200100000.00${key}`).digest('hex');
    expect(midtransSignature('order-1', '200', '100000.00', key)).toBe(expected);
  });

  it('accepts a valid notification and normalizes it', () => {
    const event = provider.parseWebhook(Buffer.from(JSON.stringify(notification(key))), {});
    expect(event).toMatchObject({
      status: 'PAID',
      amount: 50_000,
      currency: 'IDR',
      donationRef: '1b4e28ba-2fa1-81d2-883f-0016d3cca427',
      eventKey: '1b4e28ba-2fa1-81d2-883f-0016d3cca427:settlement:200',
    });
  });

  it('accepts the previous key during rotation and refuses an unknown one', () => {
    expect(
      rejection(() =>
        provider.parseWebhook(Buffer.from(JSON.stringify(notification(previous))), {}),
      ),
    ).toBe('accepted');
    expect(
      rejection(() =>
        provider.parseWebhook(Buffer.from(JSON.stringify(notification('wrong'))), {}),
      ),
    ).toBe('signature');
  });

  it('refuses a tampered amount, and verifies re-serialized JSON (the signature covers fields)', () => {
    const tampered = { ...notification(key), gross_amount: '5000000.00' };
    expect(rejection(() => provider.parseWebhook(Buffer.from(JSON.stringify(tampered)), {}))).toBe(
      'signature',
    );
    expect(
      rejection(() =>
        provider.parseWebhook(Buffer.from(JSON.stringify(notification(key), null, 2)), {}),
      ),
    ).toBe('accepted');
  });

  it('maps capture by fraud status and reads the raw gross_amount exactly', () => {
    const challenged = notification(key, {
      transaction_status: 'capture',
      fraud_status: 'challenge',
    });
    expect(provider.parseWebhook(Buffer.from(JSON.stringify(challenged)), {}).status).toBe(
      'PENDING',
    );
    const fractional = notification(key, { gross_amount: '50000.50' });
    expect(
      rejection(() => provider.parseWebhook(Buffer.from(JSON.stringify(fractional)), {})),
    ).toBe('malformed');
  });
});

describe('Xendit callback token', () => {
  const provider = createXenditProvider({
    baseUrl: 'http://127.0.0.1:1',
    secretKey: 'xnd_test',
    callbackTokens: ['token-new', 'token-old'],
  });
  const body = Buffer.from(
    JSON.stringify({
      id: 'inv_1',
      external_id: 'don-1',
      status: 'PAID',
      amount: 50_000,
      paid_amount: 50_000,
      currency: 'IDR',
      paid_at: '2026-11-30T10:00:00Z',
    }),
  );

  it('accepts the current and the previous token, refuses others and a missing one', () => {
    expect(provider.parseWebhook(body, { 'x-callback-token': 'token-new' })).toMatchObject({
      status: 'PAID',
      eventKey: 'inv_1:PAID',
      donationRef: 'don-1',
    });
    expect(rejection(() => provider.parseWebhook(body, { 'x-callback-token': 'token-old' }))).toBe(
      'accepted',
    );
    expect(rejection(() => provider.parseWebhook(body, { 'x-callback-token': 'token-ne' }))).toBe(
      'signature',
    );
    expect(rejection(() => provider.parseWebhook(body, {}))).toBe('signature');
  });

  it('treats SETTLED as paid and refuses an unknown status', () => {
    const settled = Buffer.from(body.toString().replace('"PAID"', '"SETTLED"'));
    expect(provider.parseWebhook(settled, { 'x-callback-token': 'token-new' }).status).toBe('PAID');
    const odd = Buffer.from(body.toString().replace('"PAID"', '"WEIRD"'));
    expect(rejection(() => provider.parseWebhook(odd, { 'x-callback-token': 'token-new' }))).toBe(
      'malformed',
    );
  });
});

describe('amount conversions', () => {
  it('parses decimal strings exactly, per currency exponent', () => {
    expect(parseDecimalAmount('50000.00', 'IDR')).toBe(50_000);
    expect(parseDecimalAmount('12.34', 'USD')).toBe(1234);
    expect(parseDecimalAmount('12.345', 'USD')).toBeUndefined();
    expect(parseDecimalAmount('1e5', 'IDR')).toBeUndefined();
    expect(parseDecimalAmount('-5', 'IDR')).toBeUndefined();
  });
});
