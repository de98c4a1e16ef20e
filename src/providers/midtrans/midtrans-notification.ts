import { createHash, timingSafeEqual } from 'node:crypto';
import { WebhookRejected } from '../payment-provider';
import type { WebhookEvent } from '../payment-provider';
import { midtransPaymentStatus, midtransTime, rupiah } from './midtrans-protocol';
import type { MidtransNotification, MidtransRefund } from './midtrans-protocol';

/** Midtrans' notification signature: SHA-512 hex of order_id + status_code + gross_amount + key. */
export function midtransSignature(
  orderId: string,
  statusCode: string,
  grossAmount: string,
  serverKey: string,
): string {
  return createHash('sha512')
    .update(`${orderId}${statusCode}${grossAmount}${serverKey}`)
    .digest('hex');
}

function verify(body: MidtransNotification, serverKeys: readonly string[]): void {
  const fields: unknown[] = [
    body.order_id,
    body.status_code,
    body.gross_amount,
    body.signature_key,
  ];
  if (!fields.every((f) => typeof f === 'string' && f.length > 0 && f.length <= 256)) {
    throw new WebhookRejected('signature', 'missing signature fields');
  }
  const offered = Buffer.from(body.signature_key, 'utf8');
  const valid = serverKeys.some((key) => {
    const expected = Buffer.from(
      midtransSignature(body.order_id, body.status_code, body.gross_amount, key),
      'utf8',
    );
    return offered.length === expected.length && timingSafeEqual(offered, expected);
  });
  if (!valid) throw new WebhookRejected('signature', 'signature_key does not match');
}

/** The transaction statuses Midtrans documents (docs/transaction-status-cycle.md). */
const STATUSES = new Set([
  'authorize',
  'capture',
  'settlement',
  'pending',
  'deny',
  'cancel',
  'expire',
  'failure',
  'refund',
  'partial_refund',
  'chargeback',
  'partial_chargeback',
]);

/** Refunds a key tells apart by count; more are keyed as this many. */
const KEYED_REFUNDS = 10;

/**
 * The inbox key of a notification. Midtrans signs only `order_id`, `status_code` and
 * `gross_amount`, so anyone holding one genuine notification can resend it with any other field
 * changed: the rest of the key is drawn from a small fixed set (a documented status or `other`;
 * for a refund, how many `refunds[]` there are and how many the bank confirmed, each counted up
 * to {@link KEYED_REFUNDS}), so such variants make a bounded number of inbox rows per order and
 * the rest are duplicates. A refund is keyed by its counts, not its ids: Midtrans sends one
 * notification before the bank confirms and one after, and one per partial refund.
 */
function eventKey(body: MidtransNotification, status: string): string {
  const signed = `${body.order_id}:${body.status_code}:${body.gross_amount}`;
  if (!STATUSES.has(status)) return `${signed}:other`;
  if (status !== 'refund' && status !== 'partial_refund') return `${signed}:${status}`;
  // Unchecked entries: only whether each is an object with `bank_confirmed_at` is read.
  const refunds: unknown[] = Array.isArray(body.refunds) ? body.refunds : [];
  const confirmed = refunds.filter(
    (r) => typeof r === 'object' && r !== null && Boolean((r as MidtransRefund).bank_confirmed_at),
  );
  const count = (n: number) => Math.min(n, KEYED_REFUNDS);
  return `${signed}:${status}:${count(refunds.length)}:${count(confirmed.length)}`;
}

/**
 * A Midtrans HTTP notification, verified and normalized. The signature leaves
 * `transaction_status` and everything else out, so nothing in it is acted on as it stands:
 * payment events are confirmed with the status API by the workflows (`verifyWithProvider`),
 * and refunds and chargebacks, which Midtrans reports on the transaction without an id of
 * their own, are hints: the payment sync reads the status API and follows only the refunds and
 * the chargeback it lists.
 */
export function parseMidtransNotification(
  rawBody: Buffer,
  serverKeys: readonly string[],
): WebhookEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new WebhookRejected('malformed', 'body is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null) {
    throw new WebhookRejected('malformed', 'not an object');
  }
  // Checked field by field below before anything is trusted.
  const body = parsed as MidtransNotification;
  verify(body, serverKeys);
  const status = typeof body.transaction_status === 'string' ? body.transaction_status : '';
  const amount = rupiah(body.gross_amount);
  const currency = body.currency ?? 'IDR';
  if (amount === undefined || currency !== 'IDR' || typeof body.transaction_id !== 'string') {
    throw new WebhookRejected('malformed', 'not an IDR Midtrans transaction notification');
  }
  const key = eventKey(body, status);
  if (HINTS.has(status)) {
    return {
      kind: 'hint',
      eventKey: key,
      donationRef: body.order_id,
      providerReference: body.transaction_id,
      reason: status,
    };
  }
  const paymentStatus = midtransPaymentStatus(status, body.fraud_status);
  if (!paymentStatus) {
    return { kind: 'ignored', eventKey: key, reason: `status ${status.slice(0, 64)}` };
  }
  return {
    kind: 'payment',
    eventKey: key,
    donationRef: body.order_id,
    providerReference: body.transaction_id,
    status: paymentStatus,
    amount,
    currency,
    occurredAt: midtransTime(body.transaction_time) ?? new Date().toISOString(),
  };
}

/** Money going back: the status read says which refunds and what chargeback, and how much. */
const HINTS = new Set(['refund', 'partial_refund', 'chargeback', 'partial_chargeback']);
