import type { PaymentStatus } from '../../../workflows/payment-event';

/**
 * Midtrans Core API shapes galang uses (docs.midtrans.com: Core API, HTTP notification).
 * Amounts travel as decimal strings ("50000.00"); statuses as `transaction_status`, with
 * `fraud_status` qualifying `capture`.
 */
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
}

export interface MidtransNotification extends MidtransTransaction {
  signature_key: string;
}

/** Midtrans' documented lifecycle, normalized; `capture` counts only once fraud is accepted. */
export function midtransStatus(
  transactionStatus: string,
  fraudStatus?: string,
): PaymentStatus | undefined {
  switch (transactionStatus) {
    case 'capture':
      return fraudStatus === 'accept' || fraudStatus === undefined
        ? 'PAID'
        : fraudStatus === 'deny'
          ? 'DECLINED'
          : 'PENDING';
    case 'settlement':
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
    case 'refund':
      return 'REFUNDED';
    case 'partial_refund':
      return 'PARTIALLY_REFUNDED';
    case 'chargeback':
    case 'partial_chargeback':
      return 'CHARGED_BACK';
    default:
      return undefined;
  }
}
