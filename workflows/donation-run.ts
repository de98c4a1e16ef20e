import {
  ApplicationFailure,
  condition,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { DonationActivities, PaymentStart } from '../activities/donation-activities';
import type { ReversalActivities } from '../activities/reversal-activities';
import {
  DonationStatusAttribute,
  FailureType,
  getStateQuery,
  isClosedWithoutMoney,
  isOpen,
  paymentActionUpdate,
  paymentEventSignal,
} from './contracts';
import type {
  DonationInput,
  DonationOutcome,
  DonationState,
  DonationStatus,
  EndingReason,
  FinalFailureStatus,
  PaymentActionResult,
  PaymentEvent,
  PaymentSnapshot,
} from './contracts';
import { eventFrom, isDecided, reducePayment } from './payment-state';
import { countNeedsReview } from './needs-review-metric';
import { moneyActivity, moneyLocalActivity } from './retry-policies';

const { startPayment, fetchPayment, closePayment, confirmDonation, failDonation } =
  proxyLocalActivities<DonationActivities>(moneyLocalActivity);
const { startLatePayment } = proxyActivities<ReversalActivities>(moneyActivity);

const MAX_CHECK_INTERVAL_MS = 10 * 60 * 1000;

/**
 * One donation workflow run's state and its lifecycle's steps (start, wait, deadline, settle,
 * finish); the signal, query and update handlers read and feed it. Bundled into the sandbox.
 */
export class DonationRun {
  readonly state: DonationState = {
    status: 'PENDING',
    providerReference: undefined,
    action: undefined,
    payment: undefined,
    timeline: [],
  };
  /** Why the payment action will never come: the update fails with it. */
  private refusal: ApplicationFailure | undefined;
  /** A notification arrived that only the provider's status API may confirm. */
  private unverified = false;
  /** Notifications that came before the payment existed wait until its reference is known. */
  private readonly early: PaymentEvent[] = [];
  private reference = '';
  private deadlineAt = 0;
  /** Past its last look at the payment: a success from now on is the late payment's. */
  private closing = false;
  private creditedBefore = false;
  private missedSuccess: PaymentEvent | undefined;

  constructor(private readonly input: DonationInput) {
    setHandler(paymentEventSignal, (event) => {
      this.onPaymentEvent(event);
    });
    setHandler(getStateQuery, () => this.state);
    setHandler(paymentActionUpdate, () => this.paymentAction());
  }

  /** Records the donation and creates its payment; an outcome if the donation ends here. */
  async start(): Promise<DonationOutcome | undefined> {
    const started = await startPayment(this.input);
    if (started.kind === 'refused') return this.refuse(started);
    if (started.kind === 'decided') return this.decidedBefore(started);
    this.reference = started.providerReference;
    this.state.action = started.action;
    this.state.providerReference = started.providerReference;
    this.setStatus('AWAITING_PAYMENT');
    this.early.splice(0).forEach((event) => {
      this.onPaymentEvent(event);
    });
    this.deadlineAt = Date.now() + this.input.paymentTimeoutSeconds * 1000;
    return undefined;
  }

  /** Waits for the provider's decision until the deadline; false if the deadline came first. */
  async wait(): Promise<boolean> {
    const untilDeadline = () => Math.max(0, this.deadlineAt - Date.now());
    while (await condition(() => this.unverified || this.decided(), untilDeadline())) {
      if (this.takeUnverified()) await this.ask();
      if (this.decided()) return true;
    }
    return false;
  }

  /**
   * The webhook may be late or lost: the provider's own answer decides, never the clock alone.
   * Past the deadline a payment ends credited, declined, or expired (our own cancel included).
   */
  async deadline(): Promise<DonationOutcome> {
    this.note('deadline-reached');
    await this.ask();
    if (this.decided()) return this.settle();
    const closed = await closePayment(this.input.provider, this.reference);
    this.accept(eventFrom(closed.payment, 'cancel'), 'cancel');
    if (!closed.accepted && !(await this.checkUntilHorizon())) {
      return this.finish('NEEDS_REVIEW', 'payment-unsettled-after-horizon');
    }
    const status = this.state.payment?.status;
    return status === 'PAID' || status === 'DECLINED'
      ? this.settle()
      : this.finish('EXPIRED', 'no-payment-before-deadline');
  }

  /** Ends the donation as the provider decided: credited once, or closed without money. */
  async settle(): Promise<DonationOutcome> {
    const payment = this.state.payment;
    switch (payment?.status) {
      case 'PAID': {
        const { amount, currency } = this.input;
        if (payment.amount !== amount || payment.currency !== currency) {
          return this.finish(
            'NEEDS_REVIEW',
            `paid ${payment.amount} ${payment.currency}, expected ${amount} ${currency}`,
          );
        }
        // `late`: a step of this workflow may have closed the row already (a local activity whose
        // task was retried because this PAID arrived), and the workflow owns its own payment.
        const confirmed = await confirmDonation(this.input.donationId, true);
        this.setStatus(confirmed.status);
        return this.outcome(confirmed.credited);
      }
      case 'DECLINED':
        return this.finish('FAILED', 'payment-declined');
      case 'CANCELED':
        return this.finish('CANCELED', 'canceled-at-provider');
      default:
        return this.finish('EXPIRED', 'no-payment-before-deadline');
    }
  }

  /** Closes the donation without money; a success that raced the ending goes to a late payment. */
  async finish(status: FinalFailureStatus, reason: EndingReason): Promise<DonationOutcome> {
    this.closing = true;
    // An earlier run may have ended the row first (a reset raced the ending): the row's ending
    // decides, so a success that run never saw still goes to its late payment.
    const recorded = await failDonation(this.input.donationId, status, reason);
    this.setStatus(recorded);
    if (recorded === 'NEEDS_REVIEW') countNeedsReview(reason);
    const payment = this.state.payment;
    if (recorded !== 'NEEDS_REVIEW' && payment?.status === 'PAID') {
      await this.handOffLatePayment(this.reference, payment);
    }
    return this.outcome(false);
  }

  /** A payment the provider would not close (in processing) may still succeed: checked on. */
  private async checkUntilHorizon(): Promise<boolean> {
    const horizon = this.deadlineAt + this.input.settleHorizonSeconds * 1000;
    let interval = 5_000;
    while (!this.decided()) {
      const left = horizon - Date.now();
      if (left <= 0) return false;
      const woken = await condition(
        () => this.unverified || this.decided(),
        Math.min(interval, left),
      );
      if (this.takeUnverified() || !woken) await this.ask();
      interval = Math.min(interval * 2, MAX_CHECK_INTERVAL_MS);
    }
    return true;
  }

  private refuse(started: Extract<PaymentStart, { kind: 'refused' }>): DonationOutcome {
    this.refusal = ApplicationFailure.nonRetryable(
      `Donation refused: ${started.reason}`,
      started.failureType,
    );
    this.setStatus('FAILED');
    return this.outcome(false);
  }

  /** Decided by an earlier run (an operator's reset) or a workflow whose history is gone. */
  private decidedBefore(started: Extract<PaymentStart, { kind: 'decided' }>): DonationOutcome {
    this.refusal = ApplicationFailure.nonRetryable(
      'Donation already decided',
      FailureType.AlreadyDecided,
    );
    this.setStatus(started.status);
    // A success that reached this run before it found the donation decided (a reset of a
    // closed donation, say) is a late payment: its workflow verifies and credits it.
    this.closing = true;
    this.creditedBefore = started.credited === true;
    this.reference = started.providerReference ?? '';
    this.early.splice(0).forEach((event) => {
      this.onPaymentEvent(event);
    });
    return this.outcome(false);
  }

  /**
   * Hands a success that came after this run's last look at the payment to its late payment.
   * The webhook's delivery starts one too when it reads the row closed, but it may read the row
   * before this run's ending is written; then only the run, holding the signal, can. Never for a
   * donation credited before: an overdrawn dispute leaves it NEEDS_REVIEW, not unpaid.
   */
  async handOffMissedSuccess(outcome: DonationOutcome): Promise<void> {
    if (!isClosedWithoutMoney(outcome.status) || outcome.credited || this.creditedBefore) return;
    for (let event = this.missedSuccess; event; event = this.missedSuccess) {
      this.missedSuccess = undefined;
      await this.handOffLatePayment(this.reference, event);
    }
  }

  /** The late-payment workflow verifies a success that came for a closed donation, and credits it. */
  private async handOffLatePayment(reference: string, event: PaymentEvent): Promise<void> {
    const { donationId, campaignId, provider, verifyWithProvider, amount, currency } = this.input;
    await startLatePayment({
      donationId,
      campaignId,
      provider,
      providerReference: reference,
      verifyWithProvider,
      event,
      amount,
      currency,
    });
  }

  private onPaymentEvent(event: PaymentEvent): void {
    if (this.closing) {
      const ours = this.reference !== '' && event.providerReference === this.reference;
      if (ours && event.status === 'PAID') this.missedSuccess = event;
      this.note(ours ? 'payment-event-after-ending' : 'payment-event-mismatched', event.status);
    } else if (this.state.providerReference === undefined) {
      this.early.push(event);
    } else if (event.providerReference !== this.state.providerReference) {
      this.note('payment-event-mismatched', event.providerReference);
    } else if (this.input.verifyWithProvider) {
      this.unverified = true;
      this.note('payment-event-to-verify', event.status);
    } else {
      this.accept(event, 'payment-event');
    }
  }

  private async paymentAction(): Promise<PaymentActionResult> {
    await condition(() => this.state.action !== undefined || this.refusal !== undefined);
    if (this.state.action === undefined) throw this.refusal ?? ApplicationFailure.create({});
    return {
      donationId: this.input.donationId,
      status: this.state.status,
      action: this.state.action,
    };
  }

  /** Asks the provider's status API and folds its answer in like a notification. */
  private async ask(): Promise<PaymentSnapshot> {
    const truth = await fetchPayment(this.input.provider, this.reference);
    this.accept(eventFrom(truth, 'status'), 'provider-status');
    return truth;
  }

  private accept(event: PaymentEvent, source: string): void {
    const next = reducePayment(this.state.payment, event);
    this.note(next === this.state.payment ? `${source}-ignored` : source, event.status);
    this.state.payment = next;
  }

  private takeUnverified(): boolean {
    const was = this.unverified;
    this.unverified = false;
    return was;
  }

  private decided(): boolean {
    return this.state.payment !== undefined && isDecided(this.state.payment.status);
  }

  /**
   * Operators find open donations by execution status; the attribute is upserted once, at the
   * ending, so an open donation costs no visibility write of its own.
   */
  private setStatus(status: DonationStatus): void {
    this.state.status = status;
    if (!isOpen(status)) upsertSearchAttributes([{ key: DonationStatusAttribute, value: status }]);
    this.note(`status:${status}`);
  }

  private note(event: string, detail?: string): void {
    this.state.timeline.push({
      at: new Date().toISOString(),
      event,
      ...(detail ? { detail } : {}),
    });
  }

  private outcome(credited: boolean): DonationOutcome {
    return { donationId: this.input.donationId, status: this.state.status, credited };
  }
}
