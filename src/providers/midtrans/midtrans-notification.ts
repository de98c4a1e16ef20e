import { createHash, timingSafeEqual } from 'node:crypto';
import { WebhookRejected } from '../payment-provider';
import type { WebhookEvent } from '../payment-provider';
import {
  chargebackOf,
  midtransPaymentStatus,
  midtransTime,
  refundRecord,
  rupiah,
} from './midtrans-protocol';
import type { MidtransNotification } from './midtrans-protocol';

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

/**
 * A Midtrans HTTP notification, verified and normalized. The signature leaves
 * `transaction_status` out, so every event is a hint the workflow confirms with the status API
 * (`verifyWithProvider`). Refund notifications come twice, before and after the bank confirmed
 * (`bank_confirmed_at`), so the key tells them apart.
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
  const key = `${body.order_id}:${status}:${body.status_code}`;
  const base = {
    donationRef: body.order_id,
    providerReference: body.transaction_id,
    currency,
    occurredAt: midtransTime(body.transaction_time) ?? new Date().toISOString(),
  };
  if (status === 'refund' || status === 'partial_refund') {
    // It does not say which of refunds[] it is about (the newest need not be the one confirmed),
    // so it is a hint: the payment sync reads every refund. Keyed by their states, so the
    // notification after the bank confirmed is an event of its own.
    const refunds = (Array.isArray(body.refunds) ? body.refunds : []).map(refundRecord);
    const states = refunds.map((r) => `${r.refundId}:${r.status}`).join(',');
    return {
      kind: 'hint',
      eventKey: `${key}:${states}`,
      donationRef: base.donationRef,
      providerReference: base.providerReference,
      reason: status,
    };
  }
  const chargeback = chargebackOf(body);
  if (chargeback) return { ...base, ...chargeback, kind: 'dispute', eventKey: key };
  const paymentStatus = midtransPaymentStatus(status, body.fraud_status);
  if (!paymentStatus) return { kind: 'ignored', eventKey: key, reason: `status ${status}` };
  return { ...base, kind: 'payment', eventKey: key, status: paymentStatus, amount };
}
