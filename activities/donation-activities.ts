import { ApplicationFailure, Context, log } from '@temporalio/activity';
import { activityTags } from '../src/temporal/worker-metrics';
import type { WorkerMetrics } from '../src/temporal/worker-metrics';
import type { CampaignRepository } from '../src/campaigns/campaign-repository';
import { acceptsDonations } from '../src/campaigns/campaign-repository';
import type { ProgressCache } from '../src/campaigns/progress-cache';
import type { DonationStatus } from '../src/db/schema';
import type { DonationInput, FinalFailureStatus } from '../src/donations/donation';
import type {
  ConfirmResult,
  DonationRepository,
  ReversalKind,
  ReversalResult,
} from '../src/donations/donation-repository';
import { ProviderRejected } from '../src/providers/http-json';
import type {
  PaymentAction,
  PaymentSnapshot,
  ProviderRegistry,
} from '../src/providers/payment-provider';
import { FailureType } from '../workflows/contracts';
import type { PaymentEvent } from '../workflows/payment-event';

export interface DonationActivityDeps {
  donations: DonationRepository;
  campaigns: CampaignRepository;
  providers: ProviderRegistry;
  progressCache: ProgressCache;
  metrics: WorkerMetrics;
}

export interface RefundRequestInput {
  donationId: string;
  provider: string;
  providerReference: string;
  amount: number;
  reason: string;
}

const FOREIGN_KEY_VIOLATION = '23503';

/**
 * The donation workflow's side effects. Each one may run more than once (retries, worker
 * crashes, an operator's reset in the Temporal UI) and leaves the same result as running once:
 * see docs/architecture.md, "Where exactly-once comes from".
 */
export function createDonationActivities(deps: DonationActivityDeps) {
  const provider = (name: string) => {
    const found = deps.providers.get(name);
    if (!found)
      throw ApplicationFailure.nonRetryable(`No provider ${name}`, FailureType.Validation);
    return found;
  };

  return {
    /**
     * Inserts the donation once. The campaign is checked only by the call that inserted the
     * row, so re-running it after the campaign closed (a reset) does not fail a paid donation.
     */
    async recordDonation(
      input: DonationInput,
    ): Promise<{ status: DonationStatus; inserted: boolean }> {
      let inserted: boolean;
      try {
        inserted = await deps.donations.insert(input);
      } catch (error) {
        if ((error as { code?: string }).code === FOREIGN_KEY_VIOLATION) {
          throw ApplicationFailure.nonRetryable(
            `Campaign ${input.campaignId} does not exist`,
            FailureType.Validation,
          );
        }
        throw error;
      }
      if (inserted) {
        log.info('donation recorded', {
          donationId: input.donationId,
          campaignId: input.campaignId,
        });
        const campaign = await deps.campaigns.findById(input.campaignId);
        if (!campaign || !acceptsDonations(campaign, new Date())) {
          await deps.donations.markFailed(input.donationId, 'FAILED', 'campaign-closed');
        } else if (campaign.currency !== input.currency) {
          await deps.donations.markFailed(input.donationId, 'FAILED', 'currency-mismatch');
        }
      }
      const donation = await deps.donations.findById(input.donationId);
      if (!donation) throw new Error(`Donation ${input.donationId} vanished after insert`);
      // Refused by this activity (now or in an earlier run): the same refusal again.
      const reason = donation.failureReason;
      if (reason === 'campaign-closed' || reason === 'currency-mismatch') {
        throw ApplicationFailure.nonRetryable(
          `Donation refused: ${reason}`,
          reason === 'campaign-closed' ? FailureType.CampaignClosed : FailureType.Validation,
        );
      }
      return { status: donation.status, inserted };
    },

    /**
     * Asks the provider for the payment under a key derived from the donation, so every re-run
     * (retry, reset, a second workflow run) reaches the same provider payment.
     */
    async createPayment(
      input: DonationInput,
    ): Promise<{ providerReference: string; action: PaymentAction }> {
      try {
        const created = await provider(input.provider).createPayment({
          idempotencyKey: `${input.donationId}:create`,
          reference: input.donationId,
          amount: input.amount,
          currency: input.currency,
          method: input.paymentMethod,
          description: `Donation to ${input.campaignId}`,
        });
        await deps.donations.markAwaitingPayment(
          input.donationId,
          created.providerReference,
          created.action,
        );
        return { providerReference: created.providerReference, action: created.action };
      } catch (error) {
        if (isFinalRejection(error)) {
          throw ApplicationFailure.nonRetryable(
            error.message,
            error.status === 402 ? FailureType.PaymentDeclined : FailureType.Validation,
          );
        }
        throw error;
      }
    },

    async fetchPaymentStatus(
      providerName: string,
      providerReference: string,
    ): Promise<PaymentEvent> {
      return asEvent(await provider(providerName).fetchStatus(providerReference), 'status');
    },

    /**
     * Cancels an unpaid payment at the provider so the donor can no longer pay it. If the
     * provider refuses because the payment was paid meanwhile, its current state is returned
     * instead, and the workflow credits it.
     */
    async cancelPayment(providerName: string, providerReference: string): Promise<PaymentEvent> {
      const gateway = provider(providerName);
      try {
        return asEvent(await gateway.cancel(providerReference), 'cancel');
      } catch (error) {
        if (error instanceof ProviderRejected) {
          return asEvent(await gateway.fetchStatus(providerReference), 'status');
        }
        throw error;
      }
    },

    /** Refunds at the provider under `<donation id>:refund`: a re-run never refunds twice. */
    async refundPayment(request: RefundRequestInput): Promise<PaymentEvent> {
      try {
        return asEvent(
          await provider(request.provider).refund({
            idempotencyKey: `${request.donationId}:refund`,
            providerReference: request.providerReference,
            amount: request.amount,
            reason: request.reason,
          }),
          'refund',
        );
      } catch (error) {
        if (isFinalRejection(error)) {
          throw ApplicationFailure.nonRetryable(error.message, FailureType.Validation);
        }
        throw error;
      }
    },

    async confirmDonation(donationId: string): Promise<ConfirmResult> {
      const result = await deps.donations.confirm(donationId);
      log.info('donation confirmed', { donationId, ...result });
      // Only the call that credited observes, so a re-run never counts a donation twice.
      if (result.credited) await observeConfirmation(deps, donationId);
      return result;
    },

    async recordReversal(
      donationId: string,
      kind: ReversalKind,
      amount: number,
    ): Promise<ReversalResult> {
      return deps.donations.reverse(donationId, kind, amount);
    },

    async failDonation(
      donationId: string,
      status: FinalFailureStatus,
      reason: string,
    ): Promise<DonationStatus> {
      return deps.donations.markFailed(donationId, status, reason);
    },

    /**
     * Runs after every ledger commit. It puts the new totals into the cache (the name stays for
     * recorded histories): writing instead of deleting spares a popular campaign a burst of
     * misses after each donation, and the version guard keeps a slower writer from undoing it.
     */
    async invalidateCampaignCache(campaignId: string): Promise<void> {
      const progress = await deps.campaigns.progress(campaignId);
      if (progress) await deps.progressCache.refresh(progress);
    },
  };
}

export type DonationActivities = ReturnType<typeof createDonationActivities>;

/**
 * A provider's 4xx is final for this request, except that it refused our credentials: that is
 * our misconfiguration, and the activity keeps retrying (with backoff) until an operator fixes
 * the keys, rather than failing donors' payments for good.
 */
function isFinalRejection(error: unknown): error is ProviderRejected {
  return error instanceof ProviderRejected && error.status !== 401 && error.status !== 403;
}

/**
 * Records created → confirmed (both instants from Postgres' clock) on the worker's metrics
 * endpoint. Losing one observation is better than failing a credited donation's activity.
 */
async function observeConfirmation(deps: DonationActivityDeps, donationId: string) {
  try {
    const donation = await deps.donations.findById(donationId);
    if (!donation?.confirmedAt) return;
    const seconds = (donation.confirmedAt.getTime() - donation.createdAt.getTime()) / 1000;
    deps.metrics.confirmationSeconds.record(
      Math.max(0, seconds),
      activityTags(Context.current().info),
    );
  } catch (error) {
    log.warn('confirmation latency not recorded', { donationId, error: String(error) });
  }
}

function asEvent(snapshot: PaymentSnapshot, source: string): PaymentEvent {
  return {
    eventKey: `${source}:${snapshot.providerReference}:${snapshot.status}`,
    status: snapshot.status,
    amount: snapshot.amount,
    currency: snapshot.currency,
    occurredAt: new Date().toISOString(),
  };
}
