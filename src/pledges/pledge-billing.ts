import type { DonationRepository } from '../donations/donation-repository';
import type { RunningDonations } from '../donations/running-donations';
import type { PaymentProvider, ProviderRegistry } from '../providers/payment-provider';
import type { PledgeAttempt, PledgeAttemptEnd, SavedMethodUse } from '../../workflows/contracts';
import type { PledgeMailer } from './pledge-mailer';
import type { Pledge, PledgeRepository } from './pledge-repository';
import type { PledgeSchedules } from './pledge-schedules';

export interface PledgeBillingDeps {
  pledges: PledgeRepository;
  donations: DonationRepository;
  running: RunningDonations;
  providers: ProviderRegistry;
  schedules: PledgeSchedules;
  mailer: PledgeMailer;
  /** The donor's link to their pledge, a path with its token. */
  manageLink: (pledgeId: string) => string;
  /** The dunning: after the n-th failed attempt of a period, the next comes this much later. */
  retryDelaysMs: readonly number[];
}

/**
 * How a pledge's periods are paid (docs/pledges.md): with the method the provider kept, or by
 * the donor with a payment action e-mailed to them; what each attempt's end means; and the
 * dunning, which tries a failed period again on its delays, then pauses the pledge and tells
 * the donor. Every step reads the donation's row or the provider, never its own memory, so a
 * retried or reset step decides the same.
 */
export class PledgeBilling {
  constructor(private readonly deps: PledgeBillingDeps) {}

  /**
   * The next donation's use of a kept method: charge the one kept, or keep the one the donor
   * pays with; none for methods that need the donor every time (QRIS, virtual accounts).
   */
  methodUse(pledge: Pledge): SavedMethodUse | undefined {
    if (!this.provider(pledge.provider).keepsMethods(pledge.paymentMethod)) return undefined;
    return pledge.savedMethod === null ? { keep: true } : { charge: pledge.savedMethod };
  }

  /** The donation of an attempt already recorded whose donation exists (its workflow ran). */
  async startedAttempt(
    pledgeId: string,
    period: string,
    attempt: number,
  ): Promise<string | undefined> {
    const row = await this.deps.pledges.attempt(pledgeId, period, attempt);
    if (!row) return undefined;
    return (await this.deps.donations.findById(row.donationId)) ? row.donationId : undefined;
  }

  /**
   * Whether an earlier attempt of the period was paid after all (a late success: a bank that
   * settles late, a donor who confirmed an authentication after its deadline), read back from
   * the provider before a retry, which would be a new payment under a key of its own. A paid
   * one is credited by its late-payment workflow (the webhook's, or reconciliation's).
   */
  async earlierAttemptPaid(pledgeId: string, period: string, attempt: number): Promise<boolean> {
    for (let earlier = attempt - 1; earlier >= 0; earlier--) {
      const row = await this.deps.pledges.attempt(pledgeId, period, earlier);
      const donation = row && (await this.deps.donations.findById(row.donationId));
      if (!donation) continue;
      if (donation.confirmedAt) return true;
      if (!donation.providerReference) continue;
      const payment = await this.provider(donation.provider).fetchPayment(
        donation.providerReference,
      );
      if (payment.status === 'PAID') return true;
    }
    return false;
  }

  /**
   * Sends the donor the attempt's payment action when the payment waits for them (a QR code, a
   * virtual account, a card that asks for authentication); a kept card charged at once needs
   * nothing. Sent once: a repeat after a crash carries the same Message-ID.
   */
  async notice(attempt: PledgeAttempt): Promise<'sent' | 'sent-before' | 'not-needed'> {
    const pledge = await this.deps.pledges.find(attempt.pledgeId);
    if (!pledge || pledge.status === 'CANCELLED') return 'not-needed';
    const answer = await this.deps.running.paymentAction(attempt.donationId);
    if (answer?.status !== 'AWAITING_PAYMENT') return 'not-needed';
    const donation = await this.deps.donations.findById(attempt.donationId);
    if (!donation?.providerReference) return 'not-needed';
    const payment = await this.provider(donation.provider).fetchPayment(donation.providerReference);
    if (payment.status !== 'PENDING') return 'not-needed';
    // Check, send, mark: two notices at once may both send, but under one Message-ID, which
    // the donor's client shows once; a crash between send and mark sends again, never nothing.
    const recorded = await this.deps.pledges.attempt(
      attempt.pledgeId,
      attempt.period,
      attempt.attempt,
    );
    if (recorded?.notified) return 'sent-before';
    const { period } = attempt;
    const link = this.deps.manageLink(pledge.id);
    await this.deps.mailer.sendPeriodAction(pledge, period, attempt.attempt, answer.action, link);
    await this.deps.pledges.markNotified(attempt.pledgeId, period, attempt.attempt);
    return 'sent';
  }

  /**
   * Waits until the attempt's donation has ended, then says what comes next. A credited one
   * keeps the method its payment left with the provider, when the pledge has none yet.
   */
  async settle(attempt: PledgeAttempt): Promise<PledgeAttemptEnd> {
    await this.deps.running.awaitClosed(attempt.donationId);
    const donation = await this.deps.donations.findById(attempt.donationId);
    if (donation?.confirmedAt) {
      await this.keepMethod(attempt.pledgeId, donation.provider, donation.providerReference);
      return { outcome: 'paid' };
    }
    const endedWithoutMoney =
      donation?.status === 'FAILED' ||
      donation?.status === 'EXPIRED' ||
      donation?.status === 'CANCELED';
    if (!endedWithoutMoney) return { outcome: 'held', status: donation?.status };
    const retryInMs = this.deps.retryDelaysMs[attempt.attempt];
    return retryInMs === undefined ? { outcome: 'failed' } : { outcome: 'retry', retryInMs };
  }

  /**
   * Every attempt of a period failed: pauses the pledge (row, then schedule) and tells the
   * donor. A repeat (a retried step) finds it paused for this reason and only mails again,
   * under the same Message-ID.
   */
  async pauseForFailure(attempt: PledgeAttempt): Promise<void> {
    const { pledgeId, period } = attempt;
    const paused = await this.deps.pledges.pauseForFailure(pledgeId, period, attempt.attempt);
    // The call that paused, or a retry of it (the period's mark is set and the pledge still
    // paused for it): the schedule and the donor follow, each idempotent.
    const pledge = paused ?? (await this.deps.pledges.find(pledgeId));
    if (pledge?.status !== 'PAUSED' || pledge.pausedReason !== 'payment-failed') return;
    if (!paused && !(await this.deps.pledges.attempt(pledgeId, period, attempt.attempt))?.gaveUp) {
      return;
    }
    await this.deps.schedules.pause(pledge.id);
    await this.deps.mailer.sendPaused(pledge, period, this.deps.manageLink(pledge.id));
  }

  private async keepMethod(
    pledgeId: string,
    provider: string,
    providerReference: string | null,
  ): Promise<void> {
    const pledge = await this.deps.pledges.find(pledgeId);
    if (!pledge || pledge.savedMethod !== null || !providerReference) return;
    if (!this.provider(provider).keepsMethods(pledge.paymentMethod)) return;
    const payment = await this.provider(provider).fetchPayment(providerReference);
    if (payment.savedMethod) await this.deps.pledges.keepMethod(pledgeId, payment.savedMethod);
  }

  private provider(name: string): PaymentProvider {
    const provider = this.deps.providers.get(name);
    if (!provider) throw new Error(`No provider ${name} is configured`);
    return provider;
  }
}
