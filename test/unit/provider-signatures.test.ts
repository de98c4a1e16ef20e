import { WebhookRejected } from '../../src/providers/payment-provider';
import type { PaymentProvider } from '../../src/providers/payment-provider';
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
