import { ApplicationFailure, Context, log } from '@temporalio/activity';
import { acceptsDonations } from '../src/campaigns/campaign-repository';
import type { ConfirmResult } from '../src/ledger/ledger-repository';
import type { CancelResult } from '../src/providers/payment-provider';
import { ProviderRejected } from '../src/providers/http-json';
import { activityTags } from '../src/temporal/worker-metrics';
import { FailureType, isOpen, refusalFailureTypes, refusalReason } from '../workflows/contracts';
import type {
  DonationInput,
  DonationStatus,
  FinalFailureStatus,
  PaymentAction,
  PaymentSnapshot,
  RefusalReason,
} from '../workflows/contracts';
import { isFinalRejection, providerOf, refreshProgress } from './activity-deps';
import type { ActivityDeps } from './activity-deps';

/** How `startPayment` ended: a payment to wait for, a refusal, or a donation decided before. */
export type PaymentStart =
  | { kind: 'created'; providerReference: string; action: PaymentAction }
  | { kind: 'refused'; failureType: FailureType; reason: string }
  | {
      kind: 'decided';
      status: DonationStatus;
      providerReference: string | undefined;
      /** Its money reached the ledger once (a dispute may since have left it NEEDS_REVIEW). */
      credited?: boolean;
    };

const FOREIGN_KEY_VIOLATION = '23503';

/**
 * The donation workflow's side effects. Each may run more than once (retries, worker crashes,
 * an operator's reset) and leaves the same result as running once: see docs/architecture.md,
 * "Where exactly-once comes from".
 */
export function createDonationActivities(deps: ActivityDeps) {
  /**
   * Inserts the donation once. The campaign is checked only by the call that inserted the row,
   * so re-running it after the campaign closed (a reset) does not fail a paid donation.
   */
  async function recordDonation(
    input: DonationInput,
  ): Promise<{ status: DonationStatus; inserted: boolean }> {
    let recorded: Awaited<ReturnType<typeof deps.donations.insert>>;
    try {
      recorded = await deps.donations.insert(input);
    } catch (error) {
      if ((error as { code?: string }).code === FOREIGN_KEY_VIOLATION) {
        throw ApplicationFailure.nonRetryable(
          `Campaign ${input.campaignId} does not exist`,
          FailureType.Validation,
        );
      }
      throw error;
    }
    if (recorded.inserted) {
      log.info('donation recorded', { donationId: input.donationId, campaignId: input.campaignId });
      const { campaign } = recorded;
      const refusal: RefusalReason | undefined =
        !campaign || !acceptsDonations(campaign, new Date())
          ? 'campaign-closed'
          : campaign.currency !== input.currency
            ? 'currency-mismatch'
            : !providerOf(deps, input.provider).supports(input.currency, input.paymentMethod)
              ? 'unsupported-by-provider'
              : undefined;
      // The row this call just inserted is PENDING: nothing else has seen it yet.
      if (!refusal) return { status: 'PENDING', inserted: true };
      await deps.donations.markFailed(input.donationId, 'FAILED', refusal);
    }
    const donation = await deps.donations.findById(input.donationId);
    if (!donation) throw new Error(`Donation ${input.donationId} vanished after insert`);
    // A refusal ended it before it had a payment; one with a payment was decided (a decline).
    const refused = donation.providerReference ? undefined : refusalReason(donation.failureReason);
    if (refused) {
      throw ApplicationFailure.nonRetryable(
        `Donation refused: ${refused}`,
        refusalFailureTypes[refused],
      );
    }
    return { status: donation.status, inserted: recorded.inserted };
  }

  /**
   * Asks the provider for the payment under a key derived from the donation. A donation that
   * has a payment already (a hand-back, a reset, a retry past the provider's idempotency window)
   * reuses it: a donation never gets a second payment.
   */
  async function createPayment(
    input: DonationInput,
    justRecorded = false,
  ): Promise<{ providerReference: string; action: PaymentAction }> {
    // A row this call's step just inserted has no payment yet; any other may have one.
    const existing = justRecorded ? undefined : await deps.donations.findById(input.donationId);
    if (existing?.providerReference && existing.paymentAction) {
      return { providerReference: existing.providerReference, action: existing.paymentAction };
    }
    try {
      const created = await providerOf(deps, input.provider).createPayment({
        idempotencyKey: `${input.donationId}:create`,
        donationId: input.donationId,
        amount: input.amount,
        currency: input.currency,
        method: input.paymentMethod,
        description: `Donation to ${input.campaignId}`,
        savedMethod: input.savedMethod,
      });
      if (created.status === 'DECLINED') {
        // A kept method the issuer declined (a pledge's period): the row names the payment.
        await deps.donations.markDeclined(input.donationId, created.providerReference);
        throw ApplicationFailure.nonRetryable(
          'The issuer declined the saved payment method',
          FailureType.PaymentDeclined,
        );
      }
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
  }

  return {
    /**
     * Everything before the payment action in one step (one workflow task): record the donation,
     * then create or reuse its payment. A refusal is written on the row and returned.
     */
    async startPayment(input: DonationInput): Promise<PaymentStart> {
      try {
        const recorded = await recordDonation(input);
        if (!isOpen(recorded.status)) {
          const row = await deps.donations.findById(input.donationId);
          return {
            kind: 'decided',
            status: recorded.status,
            providerReference: row?.providerReference ?? undefined,
            credited: row?.confirmedAt != null,
          };
        }
        return { kind: 'created', ...(await createPayment(input, recorded.inserted)) };
      } catch (error) {
        if (!(error instanceof ApplicationFailure) || !error.nonRetryable) throw error;
        const failureType = (error.type ?? FailureType.Validation) as FailureType;
        const reason: RefusalReason =
          failureType === FailureType.PaymentDeclined ? 'payment-declined' : 'provider-refused';
        const row = await deps.donations.findById(input.donationId);
        if (row && !row.failureReason) await deps.donations.markFailed(row.id, 'FAILED', reason);
        return { kind: 'refused', failureType, reason: row?.failureReason ?? reason };
      }
    },

    async fetchPayment(providerName: string, providerReference: string): Promise<PaymentSnapshot> {
      return providerOf(deps, providerName).fetchPayment(providerReference);
    },

    /**
     * Closes an unpaid payment at the provider so the donor can no longer pay it. A refusal (paid
     * meanwhile, or still processing) answers the payment's state with `accepted: false`.
     */
    async closePayment(providerName: string, providerReference: string): Promise<CancelResult> {
      const gateway = providerOf(deps, providerName);
      try {
        return await gateway.cancel(providerReference);
      } catch (error) {
        if (!(error instanceof ProviderRejected)) throw error;
        return { accepted: false, payment: await gateway.fetchPayment(providerReference) };
      }
    },

    /**
     * Credits the donation (ledger, total and status in one transaction), then refreshes the
     * campaign's cached progress: one step, so a confirmation costs one workflow task.
     */
    async confirmDonation(donationId: string, late = false): Promise<ConfirmResult> {
      const result = await deps.ledger.confirm(donationId, { late });
      log.info('donation confirmed', { donationId, late, ...result });
      if (result.inserted) {
        // Only the call that credited observes, so a re-run never counts a donation twice.
        deps.metrics.confirmationSeconds.record(
          Math.max(0, result.confirmedAfterSeconds ?? 0),
          activityTags(Context.current().info),
        );
        await refreshProgress(deps, result.campaignId);
      }
      return result;
    },

    async failDonation(
      donationId: string,
      status: FinalFailureStatus,
      reason: string,
    ): Promise<DonationStatus> {
      return deps.donations.markFailed(donationId, status, reason);
    },
  };
}

export type DonationActivities = ReturnType<typeof createDonationActivities>;
