import type { ReceiptSeries } from '../db/schema';

/** Six digits: a million documents per organization, series and year before the width grows. */
const DIGITS = 6;

/**
 * A document's number: `GLG-2026-000123` for a receipt, `GLG-CN-2026-000007` for a credit note
 * (its own sequence). The year is the organization's, in its time zone.
 */
export function receiptNumber(
  prefix: string,
  series: ReceiptSeries,
  year: number,
  seq: number,
): string {
  const tag = series === 'credit-note' ? `${prefix}-CN` : prefix;
  return `${tag}-${String(year)}-${String(seq).padStart(DIGITS, '0')}`;
}

/** What a route takes as a number: the shape only; the token and the table decide the rest. */
export const RECEIPT_NUMBER_PATTERN = '^[A-Z0-9]{2,8}(-CN)?-[0-9]{4}-[0-9]{6,9}$';
