/**
 * Seeded provider histories for the model-based test of the money. Every history is valid for
 * the provider (the reference model refuses any other) and ends decided: no refund pending, no
 * dispute open, so the stack can go quiet. A run's seed and a case's index regenerate it.
 */
import { LATE_REFUND } from './history';
import type { History, HistoryStep, PaymentMove, ProviderProfile, RefundStart } from './history';
import { MoneyModel, expectedMoney } from './reference-model';
import { lifecyclesOf } from './lifecycles';
import type { Lifecycles } from './lifecycles';
import { Rng, caseSeed } from './rng';

export { caseSeed, mulberry32, runSeed } from './rng';

const AMOUNTS = [10_000, 25_000, 40_000, 50_000, 75_000, 100_000];
const UNIT = 1_000;

/**
 * Where an operator closes the donation's campaign, if at all: as the donation starts, after
 * the payment's first move, before a late success, after the payment's own lifecycle, or at
 * the end.
 */
type ClosePoint = 'start' | 'paying' | 'late' | 'paid' | 'end';

/** Builds the money steps in order, checking each against the model as it goes. */
class Builder {
  readonly steps: HistoryStep[] = [];
  readonly model: MoneyModel;
  private names = 0;
  /** A late success was pushed and nothing has waited for galang to decide it yet. */
  private latePending = false;

  constructor(
    readonly rng: Rng,
    readonly history: Pick<History, 'amount' | 'paidAmount' | 'refundable'>,
    readonly caps: Lifecycles,
    private readonly closeAt: ClosePoint | undefined,
  ) {
    this.model = new MoneyModel(history);
  }

  push(step: HistoryStep): void {
    this.model.apply(step, this.steps.length);
    this.steps.push(step);
  }

  name(prefix: string): string {
    this.names += 1;
    return `${prefix}${this.names}`;
  }

  settle(): void {
    this.latePending = false;
    if (this.steps.at(-1)?.kind !== 'settle') this.push({ kind: 'settle' });
  }

  /**
   * The payment succeeds. Late (the donation closed without it) to a closed campaign, galang
   * refunds it: how the provider answers that refund is drawn here. A denial leaves the money
   * credited, and galang holds it for review before anything else moves.
   */
  pay(): void {
    const view = this.model.view();
    const late = view.phase === 'closed' && !view.credited;
    // A closed campaign's answer depends on the success being late: the failure that closed
    // the donation is decided before the money comes, or the two race and either is right.
    if (late && !view.campaignOpen) this.settle();
    const starts = this.caps.operatorRefundStarts;
    const lateRefund = this.model.view().refundsSuccess
      ? this.rng.weighted<RefundStart>([
          ['pending', starts.includes('pending') ? 40 : 0],
          ['succeeded', starts.includes('succeeded') ? 40 : 0],
          ['denied', starts.includes('denied') ? 20 : 0],
        ])
      : undefined;
    this.push({ kind: 'payment', to: 'settled', ...(lateRefund && { lateRefund }) });
    this.latePending = late;
    if (lateRefund === 'denied') this.settle();
  }

  /**
   * The operator closes the campaign here if this is the history's point. After a late
   * success it waits for galang's decision: the history means paid, then closed (a close
   * racing the decision may be met by it or not, and either answer is right).
   */
  closePoint(point: ClosePoint): void {
    if (this.closeAt !== point) return;
    if (this.latePending) this.settle();
    this.push({ kind: 'close-campaign' });
  }
}

/** The payment's own lifecycle: in time, failed, expired at the deadline, past it, late. */
function paymentSteps(b: Builder): void {
  const { rng, caps } = b;
  const can = (move: PaymentMove) => caps.failures.includes(move);
  const processing = caps.processing && rng.chance(0.3);
  if (processing) b.push({ kind: 'payment', to: 'processing' });
  const first = rng.weighted<PaymentMove | 'none'>([
    ['settled', caps.pays.settled],
    ['declined', can('declined') ? 12 : 0],
    ['canceled', processing || !can('canceled') ? 0 : 8],
    ['expired', processing || !can('expired') ? 0 : 8],
    ['none', caps.pays.none],
  ]);
  if (first === 'settled') b.pay();
  else if (first !== 'none') b.push({ kind: 'payment', to: first });
  b.closePoint('paying');
  // A success right behind a failure: PAID after any failure is accepted.
  if (caps.latePayment && first !== 'none' && first !== 'settled' && rng.chance(0.15)) b.pay();
  if (b.model.view().phase === 'open') {
    b.push({ kind: 'deadline' });
    if (b.model.view().phase === 'horizon') {
      const during = rng.weighted<PaymentMove | 'none'>([
        ['settled', 35],
        ['declined', can('declined') ? 15 : 0],
        ['none', 50],
      ]);
      if (during === 'none') b.push({ kind: 'horizon' });
      else if (during === 'settled') b.pay();
      else b.push({ kind: 'payment', to: during });
    }
  }
  b.closePoint('late');
  // A late success after the donation closed without it; more often to a closed campaign.
  const view = b.model.view();
  if (caps.latePayment && view.payment !== 'settled' && rng.chance(view.campaignOpen ? 0.4 : 0.7))
    b.pay();
}

function refundAmount(rng: Rng, left: number): number {
  if (left <= UNIT || rng.chance(0.25)) return left;
  return rng.int(1, Math.floor((left - 1) / UNIT)) * UNIT;
}

/**
 * Ends one pending refund; a succeeded one may fail afterwards, as Stripe's can. A failed
 * refund of a late payment leaves it credited: the history waits for galang to hold it for
 * review (docs/donation-lifecycle.md, "Late payments") before anything else moves.
 */
function endRefund(b: Builder, refund: string): void {
  const to = !b.caps.refundFails || b.rng.chance(0.7) ? 'succeeded' : 'failed';
  b.push({ kind: 'refund-update', refund, to });
  if (to === 'succeeded') maybeFailLater(b, refund);
  else if (refund === LATE_REFUND) b.settle();
}

function maybeFailLater(b: Builder, refund: string): void {
  if (!b.caps.refundFailsLater || refund === LATE_REFUND || !b.rng.chance(0.12)) return;
  // Provider-imposed: a succeeded refund fails only once the card's bank sends the money back
  // to Stripe (support.stripe.com, "Refund sent to cancelled or expired card"), so galang has
  // read the success by then. galang posts what its read of the refund shows: a refund read
  // only as failed moves nothing (the same net, but no REFUND and give-back to compare).
  b.settle();
  b.push({ kind: 'refund-update', refund, to: 'failed' });
}

function oneRefund(b: Builder, asOperator: boolean): void {
  const { rng, caps } = b;
  // The provider refuses a second refund while one is pending: end it first.
  if (caps.onePendingRefund) for (const r of b.model.view().pendingRefunds) endRefund(b, r);
  const view = b.model.view();
  if (view.refundable < 1) return;
  // galang's API refunds only what it shows CONFIRMED or PARTIALLY_REFUNDED (not one held).
  const operator = asOperator && ['CONFIRMED', 'PARTIALLY_REFUNDED'].includes(view.status);
  const amount = refundAmount(rng, view.refundable);
  const starts = operator ? caps.operatorRefundStarts : caps.providerRefundStarts;
  const start = rng.weighted<RefundStart>([
    ['pending', starts.includes('pending') ? 50 : 0],
    ['succeeded', starts.includes('succeeded') ? 35 : 0],
    ['denied', starts.includes('denied') ? 15 : 0],
  ]);
  if (operator) {
    // The operator refunds what galang shows: the API refuses a donation it does not show
    // CONFIRMED or PARTIALLY_REFUNDED (donation-not-refundable), by design, not by a race.
    b.settle();
    const refund = b.name('op');
    b.push({ kind: 'operator-refund', refund, amount, start, requestKey: `refund-${refund}` });
    if (start === 'succeeded') maybeFailLater(b, refund);
  } else {
    const refund = b.name('r');
    b.push({ kind: 'refund', refund, amount, start });
    if (start === 'succeeded') maybeFailLater(b, refund);
  }
  // Sometimes end an earlier pending refund now, sometimes leave it for later.
  const pending = b.model.view().pendingRefunds;
  if (pending.length > 0 && rng.chance(0.5)) endRefund(b, rng.pick(pending));
}

function refunds(b: Builder, count: number): void {
  for (let i = 0; i < count; i++) {
    const view = b.model.view();
    const operator = b.caps.refunds && view.credited && b.rng.chance(0.35);
    oneRefund(b, operator);
  }
  for (const refund of b.model.view().pendingRefunds) endRefund(b, refund);
}

function dispute(b: Builder): void {
  const { rng } = b;
  const { refundable: left, disputable } = b.model.view();
  if (disputable < 1) return;
  if (b.caps.disputes === 'chargeback') {
    // Midtrans: a chargeback is of what refunds left; partial_chargeback names no amount and
    // may become a whole chargeback later; neither is ever given back.
    if (left < 1) return;
    const amount = refundAmount(rng, left);
    const partial = amount < left ? { stated: false as const } : {};
    b.push({ kind: 'dispute', dispute: b.name('d'), amount, ...partial });
    const rest = b.model.view().refundable;
    if (rest > 0 && rng.chance(0.3))
      b.push({ kind: 'dispute', dispute: b.name('d'), amount: rest });
    return;
  }
  const dispute = b.name('d');
  // A cardholder disputes the charge: now and then all of it, past what refunds left.
  const amount =
    left < 1 || rng.chance(0.2) ? disputable : rng.chance(0.6) ? left : refundAmount(rng, left);
  b.push({ kind: 'dispute', dispute, amount });
  // Half the time the decision races the opening: galang may see WON before OPEN.
  if (rng.chance(0.5)) b.settle();
  const to = rng.chance(0.5) ? 'won' : 'lost';
  b.push({ kind: 'dispute-update', dispute, to });
  if (to === 'won' && rng.chance(0.3)) refunds(b, 1);
}

/** Steps that move no money, inserted among the others: duplicates, resets, a killed worker. */
function adversity(rng: Rng, steps: readonly HistoryStep[], caps: Lifecycles): HistoryStep[] {
  const notifying = steps.flatMap((step, i) =>
    ['payment', 'refund', 'operator-refund', 'refund-update', 'dispute', 'dispute-update'].includes(
      step.kind,
    ) || step.kind === 'payment-reversed'
      ? [i]
      : [],
  );
  /** Extra steps to insert before original index `at` (steps.length: at the end). */
  const inserts: { at: number; step: HistoryStep }[] = [];
  const redeliveries = rng.weighted([
    [0, 40],
    [1, 35],
    [2, 25],
  ]);
  for (let i = 0; i < redeliveries && notifying.length > 0; i++) {
    const of = rng.pick(notifying);
    const mode = rng.chance(0.5) ? 'duplicate' : 'stale';
    inserts.push({
      at: rng.int(of + 1, steps.length),
      step: { kind: 'redeliver', step: of, mode },
    });
  }
  steps.forEach((step, i) => {
    if (step.kind === 'operator-refund' && rng.chance(0.3)) {
      inserts.push({
        at: rng.int(i + 1, steps.length),
        step: { kind: 'operator-refund-retry', refund: step.refund },
      });
    }
  });
  if (rng.chance(0.3)) {
    const to = rng.chance(0.8) ? 'first-task' : 'last-task';
    inserts.push({ at: rng.int(0, steps.length), step: { kind: 'reset', to } });
  }
  if (rng.chance(0.2))
    inserts.push({ at: rng.int(0, steps.length), step: { kind: 'kill-worker' } });
  // Drawn last, so the simulator's histories (no fault knobs) stay as they were.
  const faults = caps.faults
    ? rng.weighted([
        [0, 50],
        [1, 35],
        [2, 15],
      ])
    : 0;
  for (let i = 0; i < faults; i++) {
    const call = rng.pick(['read', 'cancel', 'refund'] as const);
    const status = rng.pick([429, 500, 503] as const);
    inserts.push({ at: rng.int(0, steps.length), step: { kind: 'provider-fault', call, status } });
  }

  // Rebuild, renumbering the steps a redelivery points at.
  const out: HistoryStep[] = [];
  const newIndex = new Map<number, number>();
  for (let i = 0; i <= steps.length; i++) {
    for (const insert of inserts.filter((x) => x.at === i)) {
      out.push(insert.step);
    }
    const step = steps[i];
    if (step) {
      newIndex.set(i, out.length);
      out.push(step);
    }
  }
  return out.map((step) => {
    if (step.kind !== 'redeliver') return step;
    const at = newIndex.get(step.step);
    if (at === undefined) throw new Error('a redelivery of no step');
    return { ...step, step: at };
  });
}

/** Case `index` of the run seeded `seed`, for one provider profile. */
export function generateHistory(seed: number, index: number, profile: ProviderProfile): History {
  const caps = lifecyclesOf(profile);
  const rng = new Rng(caseSeed(seed, index));
  const amount = rng.pick(AMOUNTS);
  const mismatch = rng.chance(0.04);
  const paidAmount = caps.mismatch && mismatch ? amount - UNIT : undefined;
  const closeAt = rng.weighted<ClosePoint | 'never'>([
    ['never', 50],
    ['start', 8],
    ['paying', 8],
    ['late', 20],
    ['paid', 8],
    ['end', 6],
  ]);
  const refundable = caps.refunds;
  const b = new Builder(
    rng,
    { amount, paidAmount, refundable },
    caps,
    closeAt === 'never' ? undefined : closeAt,
  );
  b.closePoint('start');
  paymentSteps(b);
  b.closePoint('paid');
  if (caps.reversal && b.model.view().payment === 'settled' && rng.chance(0.5)) {
    // Provider-imposed: the deny comes 1–5 minutes after the settlement (M9), which galang has
    // credited by then; a deny read before the credit is a payment that never settled.
    b.settle();
    b.push({ kind: 'payment-reversed' });
  }
  if (caps.refunds && b.model.view().payment === 'settled') {
    refunds(
      b,
      rng.weighted([
        [0, 30],
        [1, 30],
        [2, 25],
        [3, 15],
      ]),
    );
    if (caps.disputes !== 'none' && b.model.view().disputeCount === 0 && rng.chance(0.25))
      dispute(b);
  }
  b.closePoint('end');
  const history: History = {
    seed,
    index,
    profile,
    amount,
    ...(paidAmount === undefined ? {} : { paidAmount }),
    refundable,
    steps: adversity(rng, b.steps, caps),
  };
  expectedMoney(history); // the whole history, adversity included, must still be valid
  return history;
}
