import { defineSignal } from '@temporalio/workflow';
import type { DonationStatus } from './donation-status';
import type { DisputeEvent, PaymentEvent, RefundEvent, RefundStatus } from './provider-events';

/** The payment a reversal or a late payment is about, as Postgres knows it. */
export interface PaymentRef {
  donationId: string;
  campaignId: string;
  provider: string;
  providerReference: string;
  /** Check every event with the provider's status API before acting (Midtrans, Xendit). */
  verifyWithProvider: boolean;
}

/** Follows one provider refund or dispute to its end and posts its ledger entries once. */
export interface ReversalInput extends PaymentRef {
  event: RefundEvent | DisputeEvent;
}

/** A later notification about the same refund or dispute (signal-with-start). */
export const reversalEventSignal = defineSignal<[RefundEvent | DisputeEvent]>('reversalEvent');

export type ReversalOutcome =
  /** Every entry the provider's outcome calls for is in the ledger. */
  | 'posted'
  /** The provider did not move money (refund denied or failed): nothing to post. */
  | 'no-money-moved'
  /** The money cannot be matched to credited money: an operator must look. */
  | 'needs-review';

export interface ReversalResult {
  outcome: ReversalOutcome;
  donationStatus: DonationStatus;
}

/** An operator's refund: asked of the provider once, then followed like any other refund. */
export interface RefundRequestInput extends PaymentRef {
  /** Minor units. */
  amount: number;
  currency: string;
  reason: string;
  /** Derived from the operator's Idempotency-Key; part of the provider's idempotency key. */
  requestKey: string;
}

export interface RefundRequestResult {
  refundId: string;
  /** The refund's status when the provider answered; its reversal workflow follows it on. */
  status: RefundStatus;
}

/**
 * A hint that a payment's money moved (Stripe's `charge.refunded` on older endpoints, a sweep
 * of reconciliation): the provider's record is read again while hints keep coming.
 */
export const paymentSyncSignal = defineSignal('paymentSync');

export interface PaymentSyncResult {
  /** Refunds, disputes and late payments handed to their own workflows. */
  followed: number;
}

/** A PAID that arrived after its donation was closed. */
export interface LatePaymentInput extends PaymentRef {
  event: PaymentEvent;
  /** What the donation asked for: a payment of another amount is not credited. */
  amount: number;
  currency: string;
}

export type LatePaymentOutcome = 'credited' | 'refunded' | 'not-paid' | 'needs-review';

/**
 * Why a late payment is left to an operator, as `galang_donations_needs_review{reason}` counts
 * it. The refund ones are also the held donation's `failure_reason`.
 */
export type LateReviewReason =
  | 'late-payment-amount-mismatch'
  | 'late-payment-not-refundable'
  /** The refund request failed for good (the provider refused it, or it ran out of time). */
  | 'late-payment-refund-refused'
  /** The provider denied or failed the refund: the money is still credited. */
  | 'late-payment-refund-failed'
  /** The refund's reversal did not end in time, or ended in review. */
  | 'late-payment-refund-unsettled';

export interface LatePaymentResult {
  outcome: LatePaymentOutcome;
  donationStatus: DonationStatus;
  /** Why, when the outcome is `needs-review`. */
  reason?: LateReviewReason;
}
