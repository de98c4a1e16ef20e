import type { PaymentEvent, PaymentSnapshot, PaymentStatus } from './contracts';

/**
 * Rank in the payment's forward-only lifecycle. A later event of lower or equal rank is a
 * duplicate or stale, except that PAID outranks every ending without money: a success the
 * provider reports is never dropped, whatever came before it.
 */
const rank: Record<PaymentStatus, number> = {
  PENDING: 0,
  DECLINED: 1,
  EXPIRED: 1,
  CANCELED: 1,
  PAID: 2,
};

/** Whether the payment has left PENDING. */
export function isDecided(status: PaymentStatus): boolean {
  return rank[status] > 0;
}

/** Folds an event into the payment's state, forward only; returns the state to keep. */
export function reducePayment(
  current: PaymentEvent | undefined,
  next: PaymentEvent,
): PaymentEvent | undefined {
  if (current === undefined || rank[next.status] > rank[current.status]) return next;
  return current;
}

/** A status read, in the shape of a notification, so one reducer folds both. */
export function eventFrom(snapshot: PaymentSnapshot, source: string): PaymentEvent {
  return {
    kind: 'payment',
    eventKey: `${source}:${snapshot.providerReference}:${snapshot.status}`,
    providerReference: snapshot.providerReference,
    status: snapshot.status,
    amount: snapshot.amount,
    currency: snapshot.currency,
    occurredAt: new Date().toISOString(),
  };
}
