import { createHash } from 'node:crypto';

/** Midtrans' wire shapes and rules the stand-in follows; the citations are in midtrans.ts. */
export const MIDTRANS_RETRY_MINUTES = [2, 10, 30, 90, 210];

/** How many retries Midtrans makes after an answer (https-notification-webhooks.md). */
export function midtransRetries(status: number | undefined): number {
  if (status === undefined) return 5;
  if (status >= 200 && status < 300) return 0;
  if (status === 500) return 1;
  if (status === 503) return 4;
  if (status === 400 || status === 404) return 2;
  if (status === 301 || status === 302 || status === 303) return 0;
  return 5;
}

/** The stand-in's own SHA512(order_id + status_code + gross_amount + ServerKey). */
export function midtransStandinSignature(
  orderId: string,
  statusCode: string,
  grossAmount: string,
  serverKey: string,
): string {
  return createHash('sha512')
    .update(orderId + statusCode + grossAmount + serverKey)
    .digest('hex');
}

export const REFUNDABLE = new Set([
  'credit_card',
  'gopay',
  'shopeepay',
  'dana',
  'ovo',
  'qris',
  'kredivo',
  'akulaku',
]);
/** docs/transaction-status-cycle.md, "Reversal Case". */
export const REVERSIBLE = (t: Txn) =>
  t.payment_type === 'echannel' ||
  t.payment_type === 'cstore' ||
  (t.payment_type === 'bank_transfer' && t.bank === 'permata');

export interface Refund {
  refund_chargeback_id: number;
  refund_amount: number;
  created_at: string;
  reason: string;
  refund_key: string;
  refund_method: 'online';
  bank_confirmed_at?: string;
}

export interface Txn {
  order_id: string;
  transaction_id: string;
  payment_type: string;
  bank?: string;
  gross: number;
  transaction_status: string;
  transaction_time: string;
  settlement_time?: string;
  refunds: Refund[];
  chargedBack: number;
}

const STATUS_CODE: Record<string, string> = {
  pending: '201',
  deny: '202',
  failure: '202',
  expire: '407',
};
export const rupiah = (n: number) => `${n}.00`;
export const now = () =>
  new Date(Date.now() + 7 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');

export const refunded = (t: Txn) => t.refunds.reduce((s, r) => s + r.refund_amount, 0);

/** A transaction as the status API and the notifications show it. */
export const view = (t: Txn) => ({
  status_code: STATUS_CODE[t.transaction_status] ?? '200',
  transaction_id: t.transaction_id,
  order_id: t.order_id,
  merchant_id: 'G000000000',
  gross_amount: rupiah(t.gross),
  currency: 'IDR',
  payment_type: t.payment_type,
  transaction_time: t.transaction_time,
  transaction_status: t.transaction_status,
  fraud_status: 'accept',
  ...(t.settlement_time ? { settlement_time: t.settlement_time } : {}),
  ...(t.payment_type === 'bank_transfer'
    ? { va_numbers: [{ bank: t.bank, va_number: `8808${t.order_id.length}` }] }
    : {}),
  ...(t.payment_type === 'echannel' ? { bill_key: '990000000260', biller_code: '70012' } : {}),
  ...(t.refunds.length > 0
    ? {
        refund_amount: rupiah(refunded(t)),
        refunds: t.refunds.map((r) => ({ ...r, refund_amount: rupiah(r.refund_amount) })),
      }
    : {}),
});
