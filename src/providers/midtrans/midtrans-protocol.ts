import { parseDecimalAmount } from '../../money/currency';
import type {
  DisputeRecord,
  PaymentSnapshot,
  PaymentStatus,
  RefundRecord,
} from '../../../workflows/contracts/provider-events';

/**
 * Midtrans Core API shapes galang uses (docs.midtrans.com: Get Transaction Status, Refund
 * Transactions, HTTP notification). Amounts travel as decimal strings ("50000.00"), always IDR;
 * times as "YYYY-MM-DD HH:mm:ss" in GMT+7. Errors come as HTTP 200 with a `status_code` of
 * their own.
 */
export interface MidtransRefund {
  refund_chargeback_id: number | string;
  refund_amount: string;
  created_at?: string;
  reason?: string;
  refund_key?: string;
  refund_method?: string;
  /** Set once the bank confirmed the refund: Midtrans' advice for marking it done. */
  bank_confirmed_at?: string;
}

export interface MidtransTransaction {
  status_code: string;
  status_message?: string;
  transaction_id?: string;
  order_id: string;
  gross_amount: string;
  currency?: string;
  payment_type?: string;
  transaction_status: string;
  fraud_status?: string;
  transaction_time?: string;
  qr_string?: string;
  actions?: { name: string; method: string; url: string }[];
  va_numbers?: { bank: string; va_number: string }[];
  bill_key?: string;
  biller_code?: string;
  refund_amount?: string;
  refunds?: MidtransRefund[];
  /** Only in a refund request's answer. */
  refund_chargeback_id?: number | string;
  refund_key?: string;
}

export interface MidtransNotification extends MidtransTransaction {
  signature_key: string;
}

/**
 * The payment's own status. `capture` counts once fraud is accepted; a settled payment that was
 * later refunded or charged back stays PAID (the money going back is in refunds and disputes).
 * `deny` after `settlement` is Midtrans' documented reversal: the money never arrived.
 */
export function midtransPaymentStatus(
  transactionStatus: string,
  fraudStatus?: string,
): PaymentStatus | undefined {
  switch (transactionStatus) {
    case 'capture':
      if (fraudStatus === 'deny') return 'DECLINED';
      return fraudStatus === 'challenge' ? 'PENDING' : 'PAID';
    case 'settlement':
    case 'refund':
    case 'partial_refund':
    case 'chargeback':
    case 'partial_chargeback':
      return 'PAID';
    case 'pending':
    case 'authorize':
      return 'PENDING';
    case 'deny':
    case 'failure':
      return 'DECLINED';
    case 'cancel':
      return 'CANCELED';
    case 'expire':
      return 'EXPIRED';
    default:
      return undefined;
  }
}

/** Midtrans' times are GMT+7 without a zone: "2020-09-29 11:46:13" → ISO 8601 with +07:00. */
export function midtransTime(text: string | undefined): string | undefined {
  const match = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})$/.exec(text ?? '');
  return match ? `${match[1]}T${match[2]}+07:00` : undefined;
}

/** IDR without decimals: "50000.00" → 50000; a fraction of a rupiah is refused (undefined). */
export const rupiah = (text: string | undefined) =>
  text === undefined ? undefined : parseDecimalAmount(text, 'IDR');

/** A refund in `refunds[]`: pending until the bank confirmed it (`bank_confirmed_at`). */
export function refundRecord(refund: MidtransRefund): RefundRecord {
  return {
    refundId: String(refund.refund_chargeback_id),
    status: refund.bank_confirmed_at ? 'SUCCEEDED' : 'PENDING',
    amount: rupiah(refund.refund_amount) ?? 0,
  };
}

/**
 * Midtrans documents the `chargeback` status but no chargeback id or amount: a whole-transaction
 * chargeback takes what was not refunded, keyed by the order. A `partial_chargeback` names no
 * amount at all (M10), so it is the same dispute with its amount unstated: the donation is held
 * for an operator until Midtrans reports the whole one (see docs/providers-and-webhooks.md).
 */
export function chargebackOf(t: MidtransTransaction): DisputeRecord | undefined {
  const disputeId = `${t.order_id}-chargeback`;
  if (t.transaction_status === 'partial_chargeback') {
    return { disputeId, status: 'OPEN', amount: 0, amountUnstated: true };
  }
  if (t.transaction_status !== 'chargeback') return undefined;
  const refunded = (t.refunds ?? []).reduce((sum, r) => sum + (rupiah(r.refund_amount) ?? 0), 0);
  return { disputeId, status: 'LOST', amount: (rupiah(t.gross_amount) ?? 0) - refunded };
}

export function midtransSnapshot(t: MidtransTransaction): PaymentSnapshot {
  const amount = rupiah(t.gross_amount);
  if (amount === undefined) throw new RangeError(`Midtrans gross_amount ${t.gross_amount}`);
  const chargeback = chargebackOf(t);
  return {
    providerReference: t.transaction_id ?? t.order_id,
    // A status read of an expired transaction answers 407 with transaction_status `expire`.
    status:
      t.status_code === '407'
        ? 'EXPIRED'
        : (midtransPaymentStatus(t.transaction_status, t.fraud_status) ?? 'PENDING'),
    amount,
    currency: t.currency ?? 'IDR',
    refunds: (t.refunds ?? []).map(refundRecord),
    disputes: chargeback ? [chargeback] : [],
  };
}
