/**
 * ISO 4217 minor-unit exponents for the currencies galang accepts. Amounts travel and are stored as
 * integers in minor units (IDR has none, so 50 000 rupiah is 50000; USD 5.00 is 500). Floats
 * never touch money.
 */
export const currencyExponents = {
  IDR: 0,
  JPY: 0,
  KRW: 0,
  SGD: 2,
  MYR: 2,
  PHP: 2,
  THB: 2,
  USD: 2,
  EUR: 2,
  AUD: 2,
} as const satisfies Record<string, number>;

export type CurrencyCode = keyof typeof currencyExponents;

export function isSupportedCurrency(code: string): code is CurrencyCode {
  return Object.hasOwn(currencyExponents, code);
}

/** Renders minor units as a decimal string for people and provider APIs ("50000", "5.00"). */
export function formatMinorUnits(amount: bigint | number, currency: CurrencyCode): string {
  const exponent = currencyExponents[currency];
  const value = BigInt(amount);
  if (exponent === 0) return value.toString();
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(exponent + 1, '0');
  const whole = digits.slice(0, -exponent);
  return `${negative ? '-' : ''}${whole}.${digits.slice(-exponent)}`;
}

/** The upper bound for one donation, kept well inside JavaScript's safe integer range. */
export const MAX_DONATION_MINOR_UNITS = 1_000_000_000_000;

/**
 * Parses a provider's decimal amount ("50000.00") into minor units for the currency, exactly:
 * digits beyond the currency's exponent must be zeros, otherwise the amount is refused rather
 * than rounded. Returns undefined for anything that is not a plain decimal number.
 */
export function parseDecimalAmount(text: string, currency: string): number | undefined {
  const match = /^(\d{1,15})(?:\.(\d{1,6}))?$/.exec(text);
  if (!match || !isSupportedCurrency(currency)) return undefined;
  const exponent = currencyExponents[currency];
  const whole = match[1] ?? '0';
  const fraction = match[2] ?? '';
  if (fraction.slice(exponent).replace(/0/g, '') !== '') return undefined;
  const value = Number(whole + fraction.slice(0, exponent).padEnd(exponent, '0'));
  return Number.isSafeInteger(value) ? value : undefined;
}
