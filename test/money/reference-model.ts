/**
 * The money of MONEY-MODEL.md as a plain function: a provider history in, the donation's status,
 * its ledger entries and its campaign's total out. It is written from the spec alone, never from
 * the implementation, so the two can disagree; steps that change no money (duplicates, stale
 * notifications, resets, a killed worker, waits) pass through it untouched on purpose.
 */
import type { DonationStatus, ReversalOutcome } from '../../workflows/contracts';
import type { Expected, ExpectedEntry, LedgerEntryType, ModelView, Phase } from './expected';
import { ImpossibleHistory } from './expected';
import { LATE_REFUND } from './history';
import type { History, HistoryStep, RefundStart, SimPaymentStatus } from './history';

interface RefundState {
  amount: number;
  status: 'pending' | 'succeeded' | 'failed';
  succeededOnce: boolean;
}

interface DisputeState {
  amount: number;
  status: 'open' | 'won' | 'lost';
}

/** What may follow each payment status at the provider (`settled` after a failure: late). */
const nextStatuses: Record<SimPaymentStatus, readonly SimPaymentStatus[]> = {
  pending: ['processing', 'settled', 'declined', 'expired', 'canceled'],
  processing: ['settled', 'declined'],
  declined: ['settled'],
  expired: ['settled'],
  canceled: ['settled'],
  settled: [],
};

/** Donation statuses the provider's own final events close an open donation with. */
const closedBy: Partial<Record<SimPaymentStatus, DonationStatus>> = {
  declined: 'FAILED',
  expired: 'EXPIRED',
  canceled: 'CANCELED',
};

/** The model, one step at a time; {@link expectedMoney} runs a whole history through it. */
export class MoneyModel {
  private payment: SimPaymentStatus = 'pending';
  private phase: Phase = 'open';
  private status: DonationStatus = 'AWAITING_PAYMENT';
  private credited = false;
  private readonly entries: ExpectedEntry[] = [];
  /** Reversal entries waiting for the donation to be credited, in the order they were due. */
  private waiting: { ref: string; entry: ExpectedEntry }[] = [];
  private readonly refunds = new Map<string, RefundState>();
  private readonly disputes = new Map<string, DisputeState>();
  /** Disputes whose amount the provider did not state: the donation is held for review. */
  private readonly held = new Set<string>();
  /** A late payment galang could not give back: held until its money has left (KEPT_HOLDS). */
  private lateHeld = false;
  /** Held disputes and the whole chargeback that covers each: one dispute at the provider. */
  private readonly coveredBy = new Map<string, string>();
  private readonly outcomes: Record<string, ReversalOutcome> = {};
  /** The campaign still takes donations (an operator may close it mid-history). */
  private campaignOpen = true;
  private at = 0;

  constructor(private readonly history: Pick<History, 'amount' | 'paidAmount' | 'refundable'>) {}

  view(): ModelView {
    const names = <T>(map: Map<string, T>, keep: (value: T) => boolean) =>
      [...map].filter(([, value]) => keep(value)).map(([name]) => name);
    return {
      payment: this.payment,
      phase: this.phase,
      campaignOpen: this.campaignOpen,
      refundsSuccess: this.refundsLateSuccess(),
      status: this.status,
      credited: this.credited,
      refundable: this.refundable(),
      disputable: this.disputable(),
      pendingRefunds: names(this.refunds, (r) => r.status === 'pending'),
      succeededRefunds: names(this.refunds, (r) => r.status === 'succeeded'),
      openDisputes: names(this.disputes, (d) => d.status === 'open'),
      refundCount: this.refunds.size,
      disputeCount: this.disputes.size,
    };
  }

  /** Applies step number `at` of the history. */
  apply(step: HistoryStep, at: number): void {
    this.at = at;
    this.applyStep(step);
  }

  /** The expected money once every step has been applied. */
  result(): Expected {
    const reversals = { ...this.outcomes };
    // Reversals of money that was never credited: an operator must look; nothing is posted.
    for (const { ref } of this.waiting) if (ref !== 'reversal') reversals[ref] = 'needs-review';
    // The same dispute at the provider, so the same workflow: it ends as the whole one does.
    for (const [h, whole] of this.coveredBy) reversals[h] = reversals[whole] ?? 'needs-review';
    const net = this.net();
    return {
      status: this.status,
      entries: [...this.entries],
      net,
      campaign: { amount: net, count: net > 0 ? 1 : 0 },
      reversals,
    };
  }

  private applyStep(step: HistoryStep): void {
    switch (step.kind) {
      case 'payment':
        this.movePayment(step.to, step.lateRefund);
        break;
      case 'payment-reversed':
        this.reversed();
        break;
      case 'deadline':
        this.deadline();
        break;
      case 'horizon':
        if (this.phase !== 'horizon') this.impossible('no horizon: the cancel was not refused');
        this.close('NEEDS_REVIEW');
        break;
      case 'refund':
      case 'operator-refund':
        this.startRefund(step.refund, step.amount, step.start, step.kind);
        break;
      case 'refund-update':
        this.updateRefund(step.refund, step.to);
        break;
      case 'dispute':
        this.openDispute(step.dispute, step.amount, step.stated ?? true);
        break;
      case 'dispute-update':
        this.decideDispute(step.dispute, step.to);
        break;
      case 'close-campaign':
        // Donations already started still settle; only a late payment asks the campaign.
        this.campaignOpen = false;
        break;
      case 'operator-refund-retry':
      case 'provider-fault':
      case 'redeliver':
      case 'reset':
      case 'kill-worker':
      case 'settle':
        // Exactly-once: none of these may move money or change the outcome.
        break;
    }
  }

  private movePayment(to: SimPaymentStatus, lateRefund: RefundStart | undefined): void {
    if (!nextStatuses[this.payment].includes(to)) {
      this.impossible(`a ${this.payment} payment cannot become ${to}`);
    }
    this.payment = to;
    if (to === 'settled') {
      this.paid(lateRefund);
      return;
    }
    if (lateRefund !== undefined) this.impossible(`galang refunds no ${to} payment`);
    if (to === 'processing' || this.phase === 'closed') return;
    // A final failure while open or while checking past the deadline ends the donation.
    const status = closedBy[to];
    if (status) this.close(status);
  }

  /**
   * A success is never lost: in time, during the horizon, or late (the late-payment path). A
   * late one to a campaign closed by then is not kept: refunded in full when the method can be,
   * else held for an operator, never credited (docs/donation-lifecycle.md, "Late payments").
   */
  private paid(lateRefund: RefundStart | undefined): void {
    const matches = (this.history.paidAmount ?? this.history.amount) === this.history.amount;
    const late = this.phase === 'closed' && !this.credited;
    const refunded = this.refundsLateSuccess();
    if (refunded !== (lateRefund !== undefined)) {
      this.impossible(
        refunded ? 'galang refunds this late payment: say how' : 'galang refunds no such payment',
      );
    }
    if (!matches) {
      // Open: the workflow's check; closed: the late-payment workflow's. Nothing is credited.
      this.close('NEEDS_REVIEW');
      return;
    }
    if (late && !this.campaignOpen && !this.history.refundable) {
      this.close('NEEDS_REVIEW');
      return;
    }
    this.phase = 'closed';
    this.credit();
    if (lateRefund !== undefined) {
      this.startRefund(LATE_REFUND, this.history.amount, lateRefund, 'late-refund');
    }
  }

  /** Whether galang would refund a success now: late, of the amount, to a closed campaign. */
  private refundsLateSuccess(): boolean {
    const matches = (this.history.paidAmount ?? this.history.amount) === this.history.amount;
    const late = this.phase === 'closed' && !this.credited;
    return matches && late && !this.campaignOpen && this.history.refundable;
  }

  /**
   * The provider undoes a settlement (Midtrans' "Reversal Case"): the money never arrived, so
   * the ledger takes the whole credit back, as a chargeback named `reversal` would.
   */
  private reversed(): void {
    if (this.payment !== 'settled' || this.refunds.size + this.disputes.size > 0) {
      this.impossible(`a ${this.payment} payment with reversals cannot be reversed`);
    }
    this.payment = 'declined';
    this.due('reversal', { type: 'CHARGEBACK', ref: 'reversal', amount: -this.history.amount });
  }

  private deadline(): void {
    if (this.phase !== 'open') this.impossible('the deadline passes only for an open donation');
    if (this.payment === 'pending') {
      this.payment = 'canceled'; // the cancel is accepted
      this.close('EXPIRED');
    } else if (this.payment === 'processing') {
      this.phase = 'horizon'; // the cancel is refused
    } else {
      this.impossible(`a ${this.payment} payment has no deadline left`);
    }
  }

  private close(status: DonationStatus): void {
    this.phase = 'closed';
    if (!this.credited) this.status = status;
  }

  private credit(): void {
    if (this.credited) return;
    this.credited = true;
    this.post('payment', { type: 'DONATION', ref: 'payment', amount: this.history.amount });
    for (const { ref, entry } of this.waiting.splice(0)) this.post(ref, entry);
  }

  private startRefund(name: string, amount: number, start: RefundStart, kind: string): void {
    if (this.refunds.has(name)) this.impossible(`refund ${name} exists`);
    if (this.payment !== 'settled') this.impossible(`a ${this.payment} payment has no refunds`);
    if (kind === 'operator-refund' && !['CONFIRMED', 'PARTIALLY_REFUNDED'].includes(this.status)) {
      this.impossible(`an operator cannot refund a ${this.status} donation`);
    }
    if ([...this.disputes.values()].some((d) => d.status !== 'won')) {
      this.impossible('a disputed payment cannot be refunded');
    }
    if (amount < 1 || amount > this.refundable()) {
      this.impossible(`refund ${name} of ${amount} exceeds ${this.refundable()}`);
    }
    const refund: RefundState = { amount, status: 'pending', succeededOnce: false };
    this.refunds.set(name, refund);
    if (start === 'denied') this.refundEnds(name, refund, 'failed');
    if (start === 'succeeded') this.refundEnds(name, refund, 'succeeded');
  }

  private updateRefund(name: string, to: 'succeeded' | 'failed'): void {
    const refund = this.refunds.get(name);
    if (!refund) return this.impossible(`no refund ${name}`);
    const allowed =
      refund.status === 'pending' || (refund.status === 'succeeded' && to === 'failed');
    if (!allowed) this.impossible(`a ${refund.status} refund cannot become ${to}`);
    this.refundEnds(name, refund, to);
  }

  private refundEnds(name: string, refund: RefundState, to: 'succeeded' | 'failed'): void {
    const wasSucceeded = refund.status === 'succeeded';
    refund.status = to;
    if (to === 'succeeded') {
      refund.succeededOnce = true;
      this.due(name, { type: 'REFUND', ref: name, amount: -refund.amount });
    } else if (wasSucceeded && this.entries.some((e) => e.type === 'REFUND' && e.ref === name)) {
      this.due(name, { type: 'REFUND_REVERSAL', ref: name, amount: refund.amount });
    } else {
      // Its REFUND was never posted (nothing credited yet): the give-back has nothing to undo.
      this.waiting = this.waiting.filter((w) => w.ref !== name);
      this.outcomes[name] = 'no-money-moved';
      // A late payment galang could not give back is held for an operator, never kept quietly,
      // until a refund or a chargeback takes its money.
      if (name === LATE_REFUND && ['CONFIRMED', 'PARTIALLY_REFUNDED'].includes(this.status)) {
        this.status = 'NEEDS_REVIEW';
        this.lateHeld = true;
      }
    }
  }

  private openDispute(name: string, amount: number, stated: boolean): void {
    if (this.disputes.has(name)) this.impossible(`dispute ${name} exists`);
    if (this.payment !== 'settled') this.impossible(`a ${this.payment} payment has no disputes`);
    if ([...this.refunds.values()].some((r) => r.status === 'pending')) {
      this.impossible('a dispute while a refund is pending');
    }
    if (amount < 1 || amount > this.disputable()) {
      this.impossible(`dispute ${name} of ${amount} exceeds ${this.disputable()}`);
    }
    this.disputes.set(name, { amount, status: 'open' });
    if (!stated) {
      // Money left, amount unknown: nothing posted, the credited donation waits for review.
      this.held.add(name);
      this.outcomes[name] = 'needs-review';
      // The unstated chargeback's hold takes the donation's one review reason.
      if (this.credited) {
        this.status = 'NEEDS_REVIEW';
        this.lateHeld = false;
      }
      return;
    }
    // A whole chargeback covers the held ones too: one entry of everything they took.
    let covered = amount;
    for (const h of this.held) {
      covered += this.disputes.get(h)?.amount ?? 0;
      this.coveredBy.set(h, name);
    }
    this.held.clear();
    this.due(name, { type: 'CHARGEBACK', ref: name, amount: -covered });
  }

  private decideDispute(name: string, to: 'won' | 'lost'): void {
    const dispute = this.disputes.get(name);
    if (dispute?.status !== 'open') return this.impossible(`no open dispute ${name}`);
    dispute.status = to;
    // LOST keeps the CHARGEBACK posted when it opened; WON gives the amount back.
    if (to === 'won')
      this.due(name, { type: 'CHARGEBACK_REVERSAL', ref: name, amount: dispute.amount });
  }

  /** A reversal entry the provider's outcome calls for: posted now, or once credited. */
  private due(ref: string, entry: ExpectedEntry): void {
    if (this.credited) this.post(ref, entry);
    else this.waiting.push({ ref, entry });
  }

  /**
   * Posts an entry and derives the status from the net, as one transaction does. The ledger
   * records what the provider moved: a dispute larger than the net takes it below zero, and the
   * donation waits for an operator (docs/donation-lifecycle.md).
   */
  private post(ref: string, entry: ExpectedEntry): void {
    this.entries.push(entry);
    const net = this.net();
    if (ref !== 'payment' && ref !== 'reversal') this.outcomes[ref] = 'posted';
    if (net < 0) this.status = 'NEEDS_REVIEW';
    else if (net === this.history.amount) this.status = 'CONFIRMED';
    else if (net > 0) this.status = 'PARTIALLY_REFUNDED';
    else this.status = this.hasOpenChargeback() ? 'CHARGED_BACK' : 'REFUNDED';
    if (this.lateHeld && net <= 0) this.lateHeld = false;
    if (this.held.size > 0 || this.lateHeld) this.status = 'NEEDS_REVIEW';
  }

  private hasOpenChargeback(): boolean {
    const posted = (type: LedgerEntryType, ref: string) =>
      this.entries.some((e) => e.type === type && e.ref === ref);
    return [...this.disputes.keys(), 'reversal'].some(
      (ref) => posted('CHARGEBACK', ref) && !posted('CHARGEBACK_REVERSAL', ref),
    );
  }

  /** What the provider still lets be refunded or disputed: paid less what is held or gone. */
  private refundable(): number {
    let left = this.history.paidAmount ?? this.history.amount;
    for (const r of this.refunds.values()) if (r.status !== 'failed') left -= r.amount;
    for (const d of this.disputes.values()) if (d.status !== 'won') left -= d.amount;
    return left;
  }

  /** What a bank may still dispute: the charge, less disputes not won (refunds do not count). */
  private disputable(): number {
    let left = this.history.paidAmount ?? this.history.amount;
    for (const d of this.disputes.values()) if (d.status !== 'won') left -= d.amount;
    return left;
  }

  private net(): number {
    return this.entries.reduce((sum, e) => sum + e.amount, 0);
  }

  private impossible(why: string): never {
    throw new ImpossibleHistory(this.at, why);
  }
}

/** The expected money after a whole history. Throws {@link ImpossibleHistory} for invalid ones. */
export function expectedMoney(history: History): Expected {
  const model = new MoneyModel(history);
  history.steps.forEach((step, i) => {
    model.apply(step, i);
  });
  return model.result();
}
