/**
 * The contract between providers, the webhook intake and the donation workflow. Pure data and
 * pure functions only: this file is bundled into the deterministic workflow sandbox.
 */

/** A provider's lifecycle, normalized. Each adapter maps its own statuses onto these. */
export type PaymentStatus =
  | 'PENDING'
  | 'PAID'
  | 'DECLINED'
  | 'EXPIRED'
  | 'CANCELED'
  | 'REFUNDED'
  | 'PARTIALLY_REFUNDED'
  | 'CHARGED_BACK';

/** What the workflow is told about a payment, by a webhook signal or by asking the provider. */
export interface PaymentEvent {
  /** The provider's dedupe key for this notification. */
  eventKey: string;
  status: PaymentStatus;
  amount: number;
  currency: string;
  /** ISO 8601, as the provider stated it. */
  occurredAt: string;
}

/**
 * Rank of a status in the forward-only lifecycle. A later event with a lower rank (a `pending`
 * that arrives after `settlement`) is ignored, so duplicates and reordering are harmless.
 */
const rank: Record<PaymentStatus, number> = {
  PENDING: 0,
  PAID: 1,
  DECLINED: 1,
  EXPIRED: 1,
  CANCELED: 1,
  PARTIALLY_REFUNDED: 2,
  REFUNDED: 3,
  CHARGED_BACK: 3,
};

/** Whether the payment has left PENDING: the workflow can stop waiting. */
export function isSettled(status: PaymentStatus): boolean {
  return rank[status] >= 1;
}

/** Folds an event into the current state, forward only. Returns the state to keep. */
export function reducePayment(
  current: PaymentEvent | undefined,
  next: PaymentEvent,
): PaymentEvent | undefined {
  if (current === undefined) return next;
  if (rank[next.status] > rank[current.status]) return next;
  return current;
}
