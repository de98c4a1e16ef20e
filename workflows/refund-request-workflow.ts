import { proxyActivities } from '@temporalio/workflow';
import type { ReversalActivities } from '../activities/reversal-activities';
import type { RefundEvent, RefundRequestInput, RefundRequestResult } from './contracts';
import { moneyActivity, refundRequestActivity } from './retry-policies';

const { requestRefund } = proxyActivities<ReversalActivities>(refundRequestActivity);
const { followReversal } = proxyActivities<ReversalActivities>(moneyActivity);

/**
 * An operator's refund (or a late payment's): asks the provider once, under a key derived from
 * the donation and the request, then hands the provider's refund to its reversal workflow, the
 * same one the provider's own notifications reach. The ledger moves only when that refund
 * succeeds. A request the provider refused, or could not be reached for within its bound, fails
 * the workflow (Failed in the UI); the money stays where it is.
 */
export async function refundRequestWorkflow(
  input: RefundRequestInput,
): Promise<RefundRequestResult> {
  const refund = await requestRefund(input);
  const event: RefundEvent = {
    kind: 'refund',
    eventKey: `refund-request:${refund.refundId}:${refund.status}`,
    providerReference: input.providerReference,
    refundId: refund.refundId,
    status: refund.status,
    amount: refund.amount,
    currency: input.currency,
    occurredAt: new Date().toISOString(),
  };
  await followReversal(
    {
      donationId: input.donationId,
      campaignId: input.campaignId,
      provider: input.provider,
      providerReference: input.providerReference,
      verifyWithProvider: input.verifyWithProvider,
    },
    event,
  );
  return { refundId: refund.refundId, status: refund.status };
}
