/**
 * The lifecycles each provider documents, as the generator may draw them: a history on a real
 * adapter only contains what that provider can do (citations in /work/notes/provider-facts.md).
 */
import type { PaymentMove, ProviderProfile, RefundStart } from './history';

export interface Lifecycles {
  /** The payment's own galang method at this provider. */
  method: string;
  /** A payment can sit `processing`, so the deadline's cancel is refused (the horizon path). */
  processing: boolean;
  /** Weights of paying in time and of not paying before the deadline (the rest: failures). */
  pays: { settled: number; none: number };
  /** Final failures a donor or bank can cause while the payment is open. */
  failures: readonly PaymentMove[];
  /** A payment can still succeed after it failed or galang closed it. */
  latePayment: boolean;
  /** The donor can pay another amount than the one asked. */
  mismatch: boolean;
  /** Refunds exist for this method at all. */
  refunds: boolean;
  /** How a refund made at the provider (its dashboard or API, not galang) first reports. */
  providerRefundStarts: readonly RefundStart[];
  /** How the provider answers galang's own refund request. */
  operatorRefundStarts: readonly RefundStart[];
  /** A pending refund can fail. */
  refundFails: boolean;
  /** A succeeded refund can fail afterwards (the money comes back). */
  refundFailsLater: boolean;
  /** The provider refuses a refund while another one of the payment is pending. */
  onePendingRefund: boolean;
  /** Disputes decided won/lost, chargebacks that stay (partial, then whole), or none. */
  disputes: 'decided' | 'chargeback' | 'none';
  /** A settled payment can be reversed (settlement → deny). */
  reversal: boolean;
  /** The provider's API can be made to answer 5xx or 429 (the stand-ins' fault knobs). */
  faults: boolean;
}

const ALL_STARTS: readonly RefundStart[] = ['pending', 'succeeded', 'denied'];

const simulator: Lifecycles = {
  method: 'qris',
  processing: true,
  pays: { settled: 45, none: 27 },
  failures: ['declined', 'canceled', 'expired'],
  latePayment: true,
  mismatch: true,
  refunds: true,
  providerRefundStarts: ALL_STARTS,
  operatorRefundStarts: ALL_STARTS,
  refundFails: true,
  refundFailsLater: true,
  onePendingRefund: false,
  disputes: 'decided',
  reversal: false,
  faults: false,
};

/**
 * The simulator paid by bank transfer: a virtual account, which its provider cannot refund by
 * API (as Midtrans' and Xendit's cannot, M7) and no cardholder can dispute. Its payment's
 * lifecycle is the simulator's, late successes included.
 */
const simulatorVa: Lifecycles = {
  ...simulator,
  method: 'bank_transfer',
  // Fewer pay in time than by QRIS: more histories reach the deadline and a late transfer.
  pays: { settled: 30, none: 40 },
  refunds: false,
  disputes: 'none',
};

/**
 * Stripe: a PaymentIntent may be `processing` (its cancel is refused); a failed attempt is not
 * final and a canceled intent cannot be paid, so neither closes nor reopens the donation.
 * Refunds may start pending, succeed, fail, and fail after success; disputes are won or lost.
 */
const stripe: Lifecycles = {
  ...simulator,
  method: 'card',
  faults: true,
  // Fewer ways to fail than the simulator's: most histories pay, so reversals get walked.
  pays: { settled: 70, none: 15 },
  failures: [],
  latePayment: false,
  mismatch: false,
};

/**
 * Midtrans QRIS: deny and expire are final, no late payment; a refund is booked at once and
 * confirmed by the bank later (two notifications); a bank can deny galang's refund (202); a
 * chargeback takes money and is never given back (`partial_chargeback`, then `chargeback`).
 */
const midtrans: Lifecycles = {
  ...simulator,
  method: 'qris',
  faults: true,
  processing: false,
  pays: { settled: 70, none: 15 },
  failures: ['declined', 'expired'],
  latePayment: false,
  mismatch: false,
  providerRefundStarts: ['pending', 'succeeded'],
  operatorRefundStarts: ALL_STARTS,
  refundFails: false,
  refundFailsLater: false,
  disputes: 'chargeback',
};

/** Midtrans Mandiri Bill: not refundable by API, but settlement → deny ("Reversal Case"). */
const midtransEchannel: Lifecycles = {
  ...midtrans,
  method: 'echannel',
  refunds: false,
  disputes: 'none',
  reversal: true,
};

/**
 * Xendit invoices paid by card: PAID or EXPIRED; refunds answer PENDING and settle by
 * webhook, one pending at a time. Disputes are documented but the stand-in has none yet.
 */
const xendit: Lifecycles = {
  ...simulator,
  method: 'card',
  faults: true,
  processing: false,
  pays: { settled: 70, none: 15 },
  failures: ['expired'],
  latePayment: false,
  mismatch: false,
  providerRefundStarts: ['pending'],
  operatorRefundStarts: ['pending'],
  refundFailsLater: false,
  onePendingRefund: true,
  disputes: 'none',
};

const byProfile: Record<ProviderProfile, Lifecycles> = {
  simulator,
  'simulator-verify': simulator,
  'simulator-va': simulatorVa,
  stripe,
  'stripe-legacy': stripe,
  midtrans,
  'midtrans-echannel': midtransEchannel,
  xendit,
};

export function lifecyclesOf(profile: ProviderProfile): Lifecycles {
  return byProfile[profile];
}
