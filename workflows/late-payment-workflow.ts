import { executeChild, proxyActivities } from '@temporalio/workflow';
import type { DonationActivities } from '../activities/donation-activities';
import type { ReversalActivities } from '../activities/reversal-activities';
import { refundRequestWorkflowId } from './contracts';
import type { LatePaymentInput, LatePaymentResult } from './contracts';
import { refundRequestWorkflow } from './refund-request-workflow';
import { countNeedsReview } from './needs-review-metric';
import { moneyActivity } from './retry-policies';

const { fetchPayment, confirmDonation } = proxyActivities<DonationActivities>(moneyActivity);
const { decideLatePayment, donationStatus, followProviderTruth, reviewLatePayment } =
  proxyActivities<ReversalActivities>(moneyActivity);

/**
 * A payment that succeeded after its donation was closed (expired, canceled, failed): never
 * lost. The provider's status API confirms it first, whatever the notification said. Then it is
 * credited; if the campaign no longer takes it (or the policy says so) it is refunded in full
 * right after, so the ledger tells the whole story and the total ends where it was.
 */
export async function latePaymentWorkflow(input: LatePaymentInput): Promise<LatePaymentResult> {
  const truth = await fetchPayment(input.provider, input.providerReference);
  if (truth.status !== 'PAID') {
    return { outcome: 'not-paid', donationStatus: (await donationStatus(input.donationId)).status };
  }
  if (truth.amount !== input.amount || truth.currency !== input.currency) {
    countNeedsReview('late-payment-amount-mismatch');
    const reason = `late payment of ${truth.amount} ${truth.currency}, expected ${input.amount} ${input.currency}`;
    return {
      outcome: 'needs-review',
      donationStatus: await reviewLatePayment(input.donationId, reason),
    };
  }
  const decision = await decideLatePayment(input.donationId);
  if (decision === 'hold') {
    countNeedsReview('late-payment-not-refundable');
    const reason = 'late payment to a closed campaign, not refundable by API';
    return {
      outcome: 'needs-review',
      donationStatus: await reviewLatePayment(input.donationId, reason),
    };
  }
  const confirmed = await confirmDonation(input.donationId, true);
  // Refunds and disputes that came before the credit found nothing to reverse: read them again.
  const { donationId, campaignId, provider, providerReference, verifyWithProvider } = input;
  await followProviderTruth({
    donationId,
    campaignId,
    provider,
    providerReference,
    verifyWithProvider,
  });
  if (decision === 'credit') return { outcome: 'credited', donationStatus: confirmed.status };
  await executeChild(refundRequestWorkflow, {
    workflowId: refundRequestWorkflowId(input.donationId, 'late-payment'),
    args: [
      {
        donationId: input.donationId,
        campaignId: input.campaignId,
        provider: input.provider,
        providerReference: input.providerReference,
        verifyWithProvider: input.verifyWithProvider,
        amount: truth.amount,
        currency: truth.currency,
        reason: 'late payment to a closed campaign',
        requestKey: 'late-payment',
      },
    ],
  });
  return { outcome: 'refunded', donationStatus: (await donationStatus(input.donationId)).status };
}
