/** The v1 reducer, for workflows started before money-v2 (workflows/legacy/). */

import type {
  PaymentEventV1 as PaymentEvent,
  PaymentStatusV1 as PaymentStatus,
} from '../contracts';

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
