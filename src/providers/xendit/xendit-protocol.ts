import { formatMinorUnits, isSupportedCurrency, parseDecimalAmount } from '../../money/currency';
import type {
  PaymentStatus,
  RefundRecord,
  RefundStatus,
} from '../../../workflows/contracts/provider-events';

/**
 * Xendit shapes galang uses (xendit-node v7: invoice/models, refund/models; docs.xendit.co:
 * refunds and their webhook). Amounts are in MAJOR units, as JSON numbers (or decimal strings
 * in some refund examples): 50000 rupiah is 50000, USD 12.34 is 12.34.
 */
export interface XenditInvoice {
  id: string;
  external_id: string;
  status: string;
  amount: number;
  paid_amount?: number;
  currency: string;
  invoice_url?: string;
  paid_at?: string;
  created?: string;
  updated?: string;
}

export interface XenditRefund {
  id: string;
  invoice_id?: string | null;
  payment_request_id?: string | null;
  payment_id?: string | null;
  reference_id?: string | null;
  amount: number | string;
  currency: string;
  status: string;
  failure_code?: string | null;
  created?: string;
  updated?: string;
}

/** The currencies of xendit-node's InvoiceCurrency that galang also counts in. */
export const XENDIT_CURRENCIES = new Set(['IDR', 'USD', 'THB', 'PHP', 'MYR']);

/** galang's minor units → Xendit's major units: IDR 50000 → 50000, USD 1234 → 12.34. */
export function toXenditAmount(amount: number, currency: string): number {
  if (!isSupportedCurrency(currency)) throw new RangeError(`unsupported currency ${currency}`);
  return Number(formatMinorUnits(amount, currency));
}

/** Xendit's major units → galang's minor units, exactly; anything finer is refused (undefined). */
export function fromXenditAmount(value: unknown, currency: string): number | undefined {
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0) return undefined;
    return parseDecimalAmount(String(value), currency);
  }
  return typeof value === 'string' ? parseDecimalAmount(value, currency) : undefined;
}

/** Invoice statuses (xendit-node InvoiceStatus). SETTLED is PAID with the funds released. */
export const invoiceStatuses: Record<string, PaymentStatus> = {
  PENDING: 'PENDING',
  PAID: 'PAID',
  SETTLED: 'PAID',
  EXPIRED: 'EXPIRED',
};

/** Refund statuses (docs: SUCCEEDED, FAILED, PENDING, CANCELLED). */
export function refundStatus(status: string): RefundStatus {
  if (status === 'SUCCEEDED') return 'SUCCEEDED';
  if (status === 'FAILED' || status === 'CANCELLED') return 'FAILED';
  return 'PENDING';
}

export function refundRecord(refund: XenditRefund): RefundRecord {
  const amount = fromXenditAmount(refund.amount, refund.currency);
  if (amount === undefined) throw new RangeError(`Xendit refund amount ${String(refund.amount)}`);
  return { refundId: refund.id, status: refundStatus(refund.status), amount };
}
