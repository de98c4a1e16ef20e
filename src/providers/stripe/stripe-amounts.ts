import { currencyExponents, isSupportedCurrency } from '../../money/currency';

/**
 * Stripe's zero-decimal currencies (docs.stripe.com/currencies#zero-decimal). Every other one
 * counts in hundredths in Stripe's API, IDR included, though ISO 4217 gives IDR no minor unit.
 */
const ZERO_DECIMAL = new Set([
  'BIF',
  'CLP',
  'DJF',
  'GNF',
  'JPY',
  'KMF',
  'KRW',
  'MGA',
  'PYG',
  'RWF',
  'UGX',
  'VND',
  'VUV',
  'XAF',
  'XOF',
  'XPF',
]);

/** How many of Stripe's units make one of galang's minor units (IDR: 100). */
function factor(currency: string): number {
  const code = currency.toUpperCase();
  if (!isSupportedCurrency(code)) throw new RangeError(`unsupported currency ${currency}`);
  return 10 ** ((ZERO_DECIMAL.has(code) ? 0 : 2) - currencyExponents[code]);
}

/** galang's minor units → Stripe's: IDR 50 000 is Stripe's 5 000 000. */
export function toStripeAmount(amount: number, currency: string): number {
  return amount * factor(currency);
}

/** Stripe's units → galang's minor units, exactly: a fraction of a rupiah is refused. */
export function fromStripeAmount(amount: number, currency: string): number {
  const f = factor(currency);
  if (!Number.isSafeInteger(amount) || amount % f !== 0) {
    throw new RangeError(`Stripe amount ${amount} ${currency} is not whole in galang's units`);
  }
  return amount / f;
}
