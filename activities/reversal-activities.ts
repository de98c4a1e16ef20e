import { ApplicationFailure, log } from '@temporalio/activity';
import { acceptsDonations } from '../src/campaigns/campaign-repository';
import type { PostResult } from '../src/ledger/ledger-repository';
import { FailureType, latePaymentWorkflowId } from '../workflows/contracts';
import type {
  DisputeEvent,
  DonationStatus,
  LatePaymentInput,
  PaymentRef,
  Posting,
  RefundEvent,
  RefundRecord,
  RefundRequestInput,
  ReversalOutcome,
} from '../workflows/contracts';
import { refundIdempotencyKey } from '../src/providers/refund-keys';
import { followProviderTruth } from '../src/reconciliation/provider-truth';
import { isFinalRejection, providerOf, refreshProgress } from './activity-deps';
import type { ActivityDeps } from './activity-deps';

/**
 * What a late payment calls for under the configured policy; `hold` when it would be refunded
 * but its method cannot be refunded by API, so an operator settles it.
 */
export type LateDecision = 'credit' | 'refund' | 'hold';

/**
 * The side effects of reversals, operator refunds and late payments. Each is keyed by the
 * donation and the provider's ids, so a re-run after a retry or a reset repeats nothing.
 */
export function createReversalActivities(deps: ActivityDeps) {
  return {
    /** Posts a refund's or dispute's entries once each, then refreshes the cached progress. */
    async postReversal(donationId: string, postings: Posting[]): Promise<PostResult> {
      const result = await deps.ledger.post(donationId, postings);
      log.info('reversal posted', { donationId, postings, ...result });
      if (result.inserted > 0) await refreshProgress(deps, result.campaignId);
      return result;
    },

    /** The donation's status and whether its money was ever credited. */
    async donationStatus(
      donationId: string,
    ): Promise<{ status: DonationStatus; credited: boolean }> {
      const donation = await deps.donations.findById(donationId);
      if (!donation) throw ApplicationFailure.nonRetryable(`No donation ${donationId}`);
      return { status: donation.status, credited: donation.confirmedAt !== null };
    },

    /**
     * Holds a credited donation for an operator (money moved that galang cannot measure); the
     * ledger's next posting derives the status from the net again.
     */
    async holdForReview(
      donationId: string,
      reason: string,
    ): Promise<{ held: boolean; status: DonationStatus }> {
      const held = await deps.donations.markCreditedForReview(donationId, reason);
      const donation = await deps.donations.findById(donationId);
      if (!donation) throw ApplicationFailure.nonRetryable(`No donation ${donationId}`);
      return { held, status: donation.status };
    },

    /**
     * Asks the provider for a refund under a key derived from the donation and the request
     * ({@link refundIdempotencyKey}): a re-run answers the same refund. A payment method the provider cannot refund by API fails for good.
     */
    async requestRefund(input: RefundRequestInput): Promise<RefundRecord> {
      const donation = await deps.donations.findById(input.donationId);
      const provider = providerOf(deps, input.provider);
      if (donation && !provider.refundable(donation.paymentMethod)) {
        throw ApplicationFailure.nonRetryable(
          `${input.provider} cannot refund ${donation.paymentMethod} payments by API`,
          FailureType.NotSupported,
        );
      }
      try {
        return await provider.refund({
          idempotencyKey: refundIdempotencyKey(input.donationId, input.requestKey),
          providerReference: input.providerReference,
          amount: input.amount,
          currency: input.currency,
          reason: input.reason,
        });
      } catch (error) {
        if (isFinalRejection(error)) {
          throw ApplicationFailure.nonRetryable(error.message, FailureType.Validation);
        }
        throw error;
      }
    },

    /** Hands what the provider's record shows and the ledger lacks on (see the function). */
    async followProviderTruth(ref: PaymentRef): Promise<number> {
      const donation = await deps.donations.findById(ref.donationId);
      if (!donation) throw ApplicationFailure.nonRetryable(`No donation ${ref.donationId}`);
      return followProviderTruth(deps, providerOf(deps, ref.provider), ref, donation);
    },

    /** Hands a refund or dispute to its reversal workflow (signal-with-start). */
    async followReversal(ref: PaymentRef, event: RefundEvent | DisputeEvent): Promise<string> {
      return deps.followUps.followReversal(ref, event);
    },

    /** How a refund's reversal workflow ended; undefined while it still runs. */
    async reversalOutcome(
      donationId: string,
      refundId: string,
    ): Promise<ReversalOutcome | 'closed' | undefined> {
      return deps.followUps.reversalOutcome(donationId, refundId);
    },

    /**
     * A late payment whose refund did not give the money back: a donation still holding it goes
     * to review with `reason`; one refunded, disputed or already held is left as it is.
     */
    async holdLateRefund(
      donationId: string,
      reason: string,
    ): Promise<{ held: boolean; status: DonationStatus }> {
      const held = await deps.donations.markKeptMoneyForReview(donationId, reason);
      const donation = await deps.donations.findById(donationId);
      if (!donation) throw ApplicationFailure.nonRetryable(`No donation ${donationId}`);
      return { held, status: donation.status };
    },

    /**
     * Starts the late-payment workflow of a donation whose workflow closed first. Not for one
     * credited since (the webhook's delivery or an earlier late payment got there first): a
     * second late payment could decide to refund money the donation keeps.
     */
    async startLatePayment(input: LatePaymentInput): Promise<string> {
      const donation = await deps.donations.findById(input.donationId);
      if (donation?.confirmedAt) return latePaymentWorkflowId(input.donationId);
      return (await deps.followUps.startLatePayment(input)).workflowId;
    },

    /** A late payment of another amount: the closed donation goes to review, nothing credited. */
    async reviewLatePayment(donationId: string, reason: string): Promise<DonationStatus> {
      await deps.donations.markLateForReview(donationId, reason);
      const donation = await deps.donations.findById(donationId);
      if (!donation) throw ApplicationFailure.nonRetryable(`No donation ${donationId}`);
      return donation.status;
    },

    /** Credit or refund a late payment: the policy, and whether the campaign still takes it. */
    async decideLatePayment(donationId: string): Promise<LateDecision> {
      const donation = await deps.donations.findById(donationId);
      if (!donation) throw ApplicationFailure.nonRetryable(`No donation ${donationId}`);
      if (deps.latePaymentPolicy === 'credit') {
        const campaign = await deps.campaigns.findById(donation.campaignId);
        if (campaign && acceptsDonations(campaign, new Date())) return 'credit';
      }
      return providerOf(deps, donation.provider).refundable(donation.paymentMethod)
        ? 'refund'
        : 'hold';
    },
  };
}

export type ReversalActivities = ReturnType<typeof createReversalActivities>;
