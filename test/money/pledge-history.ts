import type { PledgeInterval } from '../../src/pledges/pledge-calendar';
import type { SavedMethodState } from '../../src/providers/simulator/simulator-saved-methods';
import { Rng, caseSeed } from './rng';

/** How a kept card answers one off-session charge (the simulator's and Stripe's stand-in's). */
export type CardAnswer = SavedMethodState;

/** Attempts of a period: the first and the dunning's retries (PLEDGE_RETRY_DELAYS has two). */
export const ATTEMPTS = 3;

/**
 * One period of a pledge, as the driver plays it: the kept card's answers to its next charges
 * (queued at the provider), whether the donor pays each attempt that asks them (a first
 * period, a card that wants authentication), and what else happens to the period: its action
 * fired twice, the worker killed mid-charge, its workflow reset by an operator once it ended.
 */
export interface PeriodStep {
  kind: 'period';
  answers: CardAnswer[];
  donorPays: boolean[];
  double: boolean;
  kill: boolean;
  reset: boolean;
}

export type PledgeStep =
  PeriodStep | { kind: 'pause' | 'resume' | 'cancel' } | { kind: 'amount'; amount: number };

export interface PledgeHistory {
  index: number;
  seed: number;
  amount: number;
  /** Monthly or weekly: the periods' names and how far apart the driver plays them. */
  interval: PledgeInterval;
  /** The first period, charged at the pledge's creation: the donor pays it, or not. */
  first: PeriodStep;
  steps: PledgeStep[];
}

const amountOf = (rng: Rng) => rng.int(1, 40) * 5_000;

function periodStep(rng: Rng, firstPeriod = false): PeriodStep {
  const answers: CardAnswer[] = [];
  while (answers.length < ATTEMPTS && answers.at(-1) !== 'ok') {
    answers.push(
      rng.weighted<CardAnswer>([
        ['ok', 5],
        ['insufficient_funds', 1.5],
        ['expired_card', 1],
        ['authentication_required', 1.5],
      ]),
    );
  }
  return {
    kind: 'period',
    answers,
    donorPays: Array.from({ length: ATTEMPTS }, () => rng.chance(firstPeriod ? 0.8 : 0.6)),
    double: !firstPeriod && rng.chance(0.25),
    kill: rng.chance(0.1),
    reset: !firstPeriod && rng.chance(0.15),
  };
}

/** A case's history, from the run's seed and its index alone. */
export function generatePledgeHistory(seed: number, index: number): PledgeHistory {
  const own = caseSeed(seed, index);
  const rng = new Rng(own);
  const steps: PledgeStep[] = [];
  const count = rng.int(2, 5);
  for (let i = 0; i < count; i++) {
    const kind = rng.weighted<PledgeStep['kind']>([
      ['period', 6],
      ['pause', 1],
      ['resume', 1.5],
      ['amount', 1],
      ['cancel', 0.4],
    ]);
    if (kind === 'period') steps.push(periodStep(rng));
    else if (kind === 'amount') steps.push({ kind, amount: amountOf(rng) });
    else steps.push({ kind });
  }
  const amount = amountOf(rng);
  const first = periodStep(rng, true);
  // Drawn last, so a seed's earlier cases (monthly only) keep their other draws.
  const interval: PledgeInterval = rng.chance(0.5) ? 'weekly' : 'monthly';
  return { index, seed: own, amount, interval, first, steps };
}

/** What a period should come to: its attempts (who each asked) and the one paid, if any. */
export interface ExpectedPeriod {
  outcome: 'paid' | 'failed' | 'paused' | 'cancelled';
  /** Per attempt made: whether it asked the donor (no kept card, or authentication). */
  asksDonor: boolean[];
  paidAttempt: number | undefined;
  amount: number;
}

/**
 * The reference model: a pledge's status, whether a card is kept and the answers queued on it,
 * and its amount, moved by each step as docs/pledges.md describes.
 */
export class PledgeModel {
  status: 'ACTIVE' | 'PAUSED' | 'CANCELLED' = 'ACTIVE';
  /** Whether a card is kept, so a period is charged without the donor. */
  card = false;
  private queue: CardAnswer[] = [];

  constructor(
    public amount: number,
    /** Whether the method can be kept (a card); a QR pledge asks the donor every period. */
    private readonly keepable: boolean,
  ) {}

  period(step: PeriodStep): ExpectedPeriod {
    // The answers are queued on a kept card whatever the pledge's status (the driver does).
    if (this.card) this.queue.push(...step.answers);
    if (this.status !== 'ACTIVE') {
      const outcome = this.status === 'PAUSED' ? 'paused' : 'cancelled';
      return { outcome, asksDonor: [], paidAttempt: undefined, amount: this.amount };
    }
    const asksDonor: boolean[] = [];
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const answer = this.card ? (this.queue.shift() ?? 'ok') : undefined;
      const asks = answer === undefined || answer === 'authentication_required';
      asksDonor.push(asks);
      const paid = asks ? step.donorPays[attempt] === true : answer === 'ok';
      if (paid) {
        if (!this.card && this.keepable) {
          this.card = true;
          this.queue = [];
        }
        return { outcome: 'paid', asksDonor, paidAttempt: attempt, amount: this.amount };
      }
    }
    // The dunning gave up: paused, and the card forgotten (the donor pays anew on resume).
    this.status = 'PAUSED';
    this.card = false;
    this.queue = [];
    return { outcome: 'failed', asksDonor, paidAttempt: undefined, amount: this.amount };
  }

  /**
   * A change through the API: whether it is accepted. A cancelled pledge takes none, but a
   * cancel again is the same request answered the same (idempotent, nothing changes).
   */
  change(step: Exclude<PledgeStep, PeriodStep>): boolean {
    if (this.status === 'CANCELLED') return step.kind === 'cancel';
    if (step.kind === 'amount') this.amount = step.amount;
    else if (step.kind === 'pause') this.status = 'PAUSED';
    else if (step.kind === 'resume') this.status = 'ACTIVE';
    else {
      // Nothing charges a cancelled pledge again: its card is let go (and released).
      this.status = 'CANCELLED';
      this.card = false;
      this.queue = [];
    }
    return true;
  }
}
