import { createHash } from 'node:crypto';

/**
 * The provider idempotency key of an operator's refund request: derived from the donation and
 * the request's own key, so a retry, a reset or a second operator sending the same request meets
 * the same refund, and never from a run. The request key is hashed to a fixed length so every
 * provider's limits hold whatever key the operator sent (64 characters of letters, digits, `-`
 * and `_`: Midtrans' refund_key alphabet, and within Stripe's and Xendit's key limits).
 */
export function refundIdempotencyKey(donationId: string, requestKey: string): string {
  const digest = createHash('sha256').update(requestKey).digest('base64url').slice(0, 20);
  return `${donationId}-refund-${digest}`;
}
