import { formatMinorUnits, isSupportedCurrency } from '../../src/money/currency';
import { isDecided, reducePayment } from '../../workflows/payment-state';
import type { PaymentEvent, PaymentStatus } from '../../workflows/contracts';

describe('money in minor units', () => {
  it('formats by the ISO 4217 exponent', () => {
    expect(formatMinorUnits(50_000, 'IDR')).toBe('50000');
    expect(formatMinorUnits(500, 'USD')).toBe('5.00');
    expect(formatMinorUnits(5, 'USD')).toBe('0.05');
    expect(formatMinorUnits(-1234, 'EUR')).toBe('-12.34');
  });

  it('knows which currencies it accepts', () => {
    expect(isSupportedCurrency('IDR')).toBe(true);
    expect(isSupportedCurrency('XXX')).toBe(false);
    expect(isSupportedCurrency('toString')).toBe(false);
  });
});

describe('payment event reducer', () => {
  const event = (status: PaymentStatus, key: string = status): PaymentEvent => ({
    kind: 'payment',
    eventKey: key,
    providerReference: 'pay_1',
    status,
    amount: 100,
    currency: 'IDR',
    occurredAt: '2026-01-01T00:00:00Z',
  });

  it('moves forward only: a late pending after settlement is ignored', () => {
    const paid = reducePayment(reducePayment(undefined, event('PENDING')), event('PAID'));
    expect(reducePayment(paid, event('PENDING'))?.status).toBe('PAID');
  });

  it('ignores duplicates', () => {
    const paid = reducePayment(undefined, event('PAID', 'a'));
    expect(reducePayment(paid, event('PAID', 'b'))).toBe(paid);
  });

  it('never drops a success: PAID after a decline, a cancel or an expiry is taken', () => {
    for (const ending of ['DECLINED', 'CANCELED', 'EXPIRED'] as const) {
      const failed = reducePayment(undefined, event(ending));
      expect(reducePayment(failed, event('PAID'))?.status).toBe('PAID');
      expect(reducePayment(reducePayment(failed, event('PAID')), event(ending))?.status).toBe(
        'PAID',
      );
    }
    expect(isDecided('PENDING')).toBe(false);
    expect(isDecided('DECLINED')).toBe(true);
  });
});
