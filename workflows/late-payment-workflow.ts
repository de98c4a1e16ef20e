import { executeChild, metricMeter, proxyActivities } from '@temporalio/workflow';
import type { DonationActivities } from '../activities/donation-activities';
import type { ReversalActivities } from '../activities/reversal-activities';
import { refundRequestWorkflowId } from './contracts';
import type { LatePaymentInput, LatePaymentResult } from './contracts';
import { refundRequestWorkflow } from './refund-request-workflow';
import { moneyActivity } from './retry-policies';

const { fetchPayment, confirmDonation } = proxyActivities<DonationActivities>(moneyActivity);
const { decideLatePayment, donationStatus } = proxyActivities<ReversalActivities>(moneyActivity);

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
    metricMeter
      .createCounter('galang_donations_needs_review', undefined, 'Donations left to operators')
      .add(1, { reason: 'late-payment-amount-mismatch' });
    return {
      outcome: 'needs-review',
      donationStatus: (await donationStatus(input.donationId)).status,
    };
  }
  const decision = await decideLatePayment(input.campaignId);
  const confirmed = await confirmDonation(input.donationId, true);
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
