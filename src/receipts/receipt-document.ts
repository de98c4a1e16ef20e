import type { CurrencyCode } from '../money/currency';
import { currencyExponents, formatMinorUnits } from '../money/currency';

/**
 * What one donation receipt or credit note shows, already decided by the caller: the renderer
 * looks nothing up, so the same value always prints the same document.
 */
export interface ReceiptDocument {
  kind: 'receipt' | 'credit-note';
  /** The document's own number, printed and hashed into the PDF's /ID. */
  number: string;
  /**
   * The document this one reverses: a credit note's receipt (required), or, on a give-back's
   * receipt (a refund that failed, a dispute won), the credit note whose money came back.
   */
  refersTo?: string;
  organization: { name: string; address: string; taxId: string };
  campaignTitle: string;
  /** The caller decides what to print: the name, "Anonymous", or an erased label. */
  donorName: string;
  /** Minor units, an integer (IDR has none, so 26000 is Rp 26.000; USD 5.00 is 500). */
  amount: number;
  currency: CurrencyCode;
  /** BCP 47 tag for the amount and date ('id-ID' for IDR). */
  locale: string;
  issuedAt: Date;
  /** IANA zone the date is shown in ('Asia/Jakarta'), so it does not follow the server's zone. */
  timeZone: string;
  paymentMethod: string;
  verificationUrl: string;
}

/**
 * Formats minor units as the locale writes the currency, with exactly the currency's ISO 4217
 * exponent as fraction digits (id-ID IDR 26000 → "Rp 26.000", with a no-break space; en-US USD
 * 500 → "$5.00"). CLDR's own default for IDR is two digits, which would print a fraction rupiah
 * does not have. The amount goes to Intl as a decimal string, so no float ever holds money.
 */
export function formatReceiptAmount(
  amount: number,
  currency: CurrencyCode,
  locale: string,
): string {
  if (!Number.isSafeInteger(amount)) {
    throw new RangeError(`amount must be an integer of minor units, got ${amount}`);
  }
  const digits = currencyExponents[currency];
  const format = new Intl.NumberFormat(locale, {
    style: 'currency',
    currency,
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
  return format.format(formatMinorUnits(amount, currency) as Intl.StringNumericLiteral);
}

/**
 * Formats the issue time as the locale writes a date and time, in the given zone, with the zone's
 * short name (id-ID, Asia/Jakarta → "5 Desember 2026 pukul 01.00 WIB"). The text comes from the
 * runtime's ICU data, so a Node upgrade may change it (and with it the PDF's bytes).
 */
export function formatReceiptDate(issuedAt: Date, timeZone: string, locale: string): string {
  if (Number.isNaN(issuedAt.getTime())) throw new RangeError('issuedAt is not a valid date');
  return new Intl.DateTimeFormat(locale, {
    timeZone,
    year: 'numeric',
    month: 'long',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
  }).format(issuedAt);
}

/**
 * Refuses a document that would print something misleading: a credit note that names no receipt,
 * a blank reference, or a blank number (it also seeds the PDF's /ID).
 */
export function assertValidReceiptDocument(doc: ReceiptDocument): void {
  if (doc.number.trim() === '') throw new RangeError('a document needs a number');
  const reverses = doc.refersTo !== undefined && doc.refersTo.trim() !== '';
  if (doc.kind === 'credit-note' && !reverses) {
    throw new RangeError('a credit note must name the receipt it reverses');
  }
  if (doc.refersTo !== undefined && !reverses) {
    throw new RangeError('refersTo, when given, must name a document');
  }
}
