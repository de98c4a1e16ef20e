/**
 * What providers tell galang, normalized. Each adapter maps its own lifecycle onto these; the
 * webhook intake, the activities and the workflows speak only this. Pure data: bundled into the
 * workflow sandbox.
 */

/** What the donor does to pay: scan a QR string, follow a redirect, transfer to an account. */
export interface PaymentAction {
  type: 'qr' | 'redirect' | 'virtual_account';
  value: string;
}

/**
 * A payment's own lifecycle. PENDING covers everything not decided yet (waiting for the donor,
 * processing at the bank, a failed attempt the donor may retry). The three endings that carry
 * no money are final only when the provider says so; PAID always wins (see payment-state.ts).
 */
export type PaymentStatus = 'PENDING' | 'PAID' | 'DECLINED' | 'EXPIRED' | 'CANCELED';

/** A refund at the provider. Only SUCCEEDED moves money; a refund can fail after succeeding. */
export type RefundStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED';

/**
 * A dispute (chargeback). OPEN: the provider has withdrawn the amount; WON: it gave it back;
 * LOST: it keeps it.
 */
export type DisputeStatus = 'OPEN' | 'WON' | 'LOST';

interface EventBase {
  /** The provider's dedupe key for this notification (or `<source>:<ref>:<status>` for reads). */
  eventKey: string;
  /** The provider's id of the payment (PaymentIntent, Midtrans order's transaction, invoice). */
  providerReference: string;
  /** Minor units of `currency`, converted by the adapter from what the provider sends. */
  amount: number;
  currency: string;
  /** ISO 8601, as the provider stated it. */
  occurredAt: string;
}

export interface PaymentEvent extends EventBase {
  kind: 'payment';
  status: PaymentStatus;
}

export interface RefundEvent extends EventBase {
  kind: 'refund';
  /** The provider's id of this refund: the ledger keys the entry by it. */
  refundId: string;
  status: RefundStatus;
}

export interface DisputeEvent extends EventBase {
  kind: 'dispute';
  /** The provider's id of this dispute: the ledger keys its entries by it. */
  disputeId: string;
  status: DisputeStatus;
  /** The provider withdrew money but names no amount (Midtrans' partial_chargeback): held. */
  amountUnstated?: boolean;
}

/** One verified notification, or a status read turned into the same shape. */
export type ProviderEvent = PaymentEvent | RefundEvent | DisputeEvent;

/** A refund as the provider's API reports it. */
export interface RefundRecord {
  refundId: string;
  status: RefundStatus;
  /** Minor units. */
  amount: number;
}

/** A dispute as the provider's API reports it. */
export interface DisputeRecord {
  disputeId: string;
  status: DisputeStatus;
  /** Minor units; 0 when `amountUnstated`. */
  amount: number;
  /** The provider withdrew money but names no amount: the donation is held for an operator. */
  amountUnstated?: boolean;
}

/** The whole truth about one payment, read from the provider's API. */
export interface PaymentSnapshot {
  providerReference: string;
  status: PaymentStatus;
  amount: number;
  currency: string;
  refunds: RefundRecord[];
  disputes: DisputeRecord[];
  /**
   * The method the provider kept for charges without the donor, once a payment that asked to
   * keep it is paid (a pledge's first period): opaque to galang, the provider's own reference.
   */
  savedMethod?: string | undefined;
}

/**
 * A payment the provider declines after it was paid (Midtrans' "Reversal Case": a Mandiri Bill,
 * Permata or Indomaret settlement whose money never arrived). galang takes the credit back as a
 * lost dispute under this id, so it posts once through the reversal workflow like any other.
 */
export function paymentReversalId(providerReference: string): string {
  return `${providerReference}-payment-reversed`;
}

/** The dispute a DECLINED after PAID stands for: the whole amount, kept by the provider. */
export function paymentReversalEvent(event: PaymentEvent): DisputeEvent {
  return {
    kind: 'dispute',
    disputeId: paymentReversalId(event.providerReference),
    status: 'LOST',
    eventKey: event.eventKey,
    providerReference: event.providerReference,
    amount: event.amount,
    currency: event.currency,
    occurredAt: event.occurredAt,
  };
}
