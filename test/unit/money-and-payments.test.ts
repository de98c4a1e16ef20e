import { formatMinorUnits, isSupportedCurrency } from '../../src/money/currency';
import { isSettled, reducePayment } from '../../workflows/payment-event';
import type { PaymentEvent, PaymentStatus } from '../../workflows/payment-event';

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
    eventKey: key,
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

  it('lets a refund follow a payment', () => {
    const paid = reducePayment(undefined, event('PAID'));
    expect(reducePayment(paid, event('REFUNDED'))?.status).toBe('REFUNDED');
    expect(isSettled('PENDING')).toBe(false);
    expect(isSettled('PAID')).toBe(true);
  });
});
