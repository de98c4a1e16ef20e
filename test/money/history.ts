/**
 * A provider history: what happens to one donation's payment at the provider, and around it, in
 * the order the test applies it. The reference model reads it to predict the money; the
 * integration driver applies it to the real stack. Names (`r1`, `d1`) stand for the provider's
 * refund and dispute ids, which only exist once the provider has made them.
 */

/** A payment's states at the simulator (its wire names). */
export type SimPaymentStatus =
  'pending' | 'processing' | 'settled' | 'declined' | 'expired' | 'canceled';

/** The statuses a history moves a payment to; `pending` is where every payment starts. */
export type PaymentMove = Exclude<SimPaymentStatus, 'pending'>;

/** A refund as the provider first reports it: waiting, done at once, or denied at creation. */
export type RefundStart = 'pending' | 'succeeded' | 'denied';

/** Providers, as far as the money is concerned (see MONEY-MODEL.md, "Verify-before-act"). */
export type ProviderProfile =
  /** Signed whole bodies: events are acted on directly. */
  | 'simulator'
  /** The simulator standing in for Midtrans and Xendit: every event is a hint to fetch. */
  | 'simulator-verify'
  /** The simulator paid by bank transfer (a virtual account): not refundable by API. */
  | 'simulator-va'
  /** galang's Stripe adapter on the stand-in, a webhook endpoint of the current API version. */
  | 'stripe'
  /** The same on an endpoint older than 2024-10-28 (refunds send only charge.refunded). */
  | 'stripe-legacy'
  /** galang's Midtrans adapter on the stand-in, paid by QRIS (refundable). */
  | 'midtrans'
  /** Midtrans paid by Mandiri Bill (echannel): not refundable, may go settlement → deny. */
  | 'midtrans-echannel'
  /** galang's Xendit adapter on the stand-in, an invoice paid by card. */
  | 'xendit';

/** The provider a profile runs on (the `MONEY_PROVIDERS` names). */
export function providerOf(profile: ProviderProfile): string {
  return profile.split('-')[0] ?? profile;
}

/** The name of the refund galang makes of a late payment to a closed campaign. */
export const LATE_REFUND = 'late';

export type HistoryStep =
  /**
   * The provider moves the payment and notifies galang. A success after the donation closed
   * without money, to a campaign closed by then, is refunded by galang when its method can be:
   * `lateRefund` is how the provider answers that refund (named {@link LATE_REFUND}).
   */
  | { kind: 'payment'; to: PaymentMove; lateRefund?: RefundStart }
  /** The provider takes a settled payment back: the money never arrived (Midtrans' deny). */
  | { kind: 'payment-reversed' }
  /** The payment deadline passes: galang asks the provider and tries to cancel. */
  | { kind: 'deadline' }
  /** The settle horizon passes while the provider still would not close the payment. */
  | { kind: 'horizon' }
  /** A refund made at the provider (its dashboard), for `amount` minor units. */
  | { kind: 'refund'; refund: string; amount: number; start: RefundStart }
  /** An operator's refund through galang's API; `requestKey` is its Idempotency-Key. */
  | {
      kind: 'operator-refund';
      refund: string;
      amount: number;
      start: RefundStart;
      requestKey: string;
    }
  /** The operator's client sends the same refund request again (same key, same body). */
  | { kind: 'operator-refund-retry'; refund: string }
  /** A pending refund ends, or a succeeded one fails afterwards (Stripe). */
  | { kind: 'refund-update'; refund: string; to: 'succeeded' | 'failed' }
  /** The donor's bank disputes `amount`; the provider withdraws it. */
  /**
   * A cardholder's dispute of `amount`. `stated: false`: the provider withdraws it but names no
   * amount (Midtrans' partial_chargeback, M10) until a later whole chargeback covers it.
   */
  | { kind: 'dispute'; dispute: string; amount: number; stated?: false }
  | { kind: 'dispute-update'; dispute: string; to: 'won' | 'lost' }
  /**
   * A notification sent by step `step` arrives again: the same message (`duplicate`), or its
   * state under a new message id after later ones (`stale`, a reordering).
   */
  | { kind: 'redeliver'; step: number; mode: 'duplicate' | 'stale' }
  /** The provider's next answer to galang's `call` on this payment is a 5xx or a 429. */
  | { kind: 'provider-fault'; call: 'read' | 'cancel' | 'refund'; status: 429 | 500 | 503 }
  /** An operator closes the donation's campaign to new donations (`POST …/close`). */
  | { kind: 'close-campaign' }
  /** An operator resets the donation's workflow to its first or last completed workflow task. */
  | { kind: 'reset'; to: 'first-task' | 'last-task' }
  /** The worker dies and a new one takes over. */
  | { kind: 'kill-worker' }
  /** Wait until everything the previous steps started has finished before going on. */
  | { kind: 'settle' };

export interface History {
  /** The run's seed and this case's index: together they regenerate the history. */
  seed: number;
  index: number;
  profile: ProviderProfile;
  /** The donation's amount, minor units of IDR. */
  amount: number;
  /** What the donor pays when it differs from the amount (an amount mismatch). */
  paidAmount?: number;
  /** Whether the provider can refund the payment's method by API (a virtual account cannot). */
  refundable: boolean;
  steps: HistoryStep[];
}

/** One step as a line a person can read in a failure report. */
export function describeStep(step: HistoryStep): string {
  switch (step.kind) {
    case 'payment':
      return (
        `provider: payment → ${step.to}` +
        (step.lateRefund === undefined
          ? ''
          : `; galang refunds it (${LATE_REFUND}), provider answers ${step.lateRefund}`)
      );
    case 'payment-reversed':
      return 'provider: settled payment reversed (settlement → deny)';
    case 'deadline':
      return 'the payment deadline passes';
    case 'horizon':
      return 'the settle horizon passes';
    case 'refund':
      return `provider: refund ${step.refund} of ${step.amount}, ${step.start}`;
    case 'operator-refund':
      return `operator: refund ${step.refund} of ${step.amount} (key ${step.requestKey}), provider answers ${step.start}`;
    case 'operator-refund-retry':
      return `operator: the request for ${step.refund} sent again`;
    case 'refund-update':
      return `provider: refund ${step.refund} → ${step.to}`;
    case 'dispute':
      return `provider: dispute ${step.dispute} of ${step.amount} opened${step.stated === false ? ' (amount unstated)' : ''}`;
    case 'dispute-update':
      return `provider: dispute ${step.dispute} → ${step.to}`;
    case 'redeliver':
      return `the notification of step ${step.step} again (${step.mode})`;
    case 'provider-fault':
      return `provider: answers galang's next ${step.call} of this payment ${step.status}`;
    case 'close-campaign':
      return "operator: close the donation's campaign";
    case 'reset':
      return `operator: reset the donation workflow to its ${step.to}`;
    case 'kill-worker':
      return 'the worker is killed; a new one starts';
    case 'settle':
      return '(wait until quiet)';
  }
}

/** The whole history, numbered, as the failure report prints it. */
export function describeHistory(history: History): string {
  const head =
    `case ${history.index} of seed ${history.seed}: ${history.profile}, amount ${history.amount}` +
    (history.paidAmount === undefined ? '' : `, donor pays ${history.paidAmount}`) +
    (history.refundable ? '' : ', not refundable by API');
  return [head, ...history.steps.map((step, i) => `  ${i}. ${describeStep(step)}`)].join('\n');
}
