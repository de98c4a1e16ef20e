import { proxyActivities } from '@temporalio/workflow';
import type { DonationActivities } from '../activities';
import type { ReversalResult } from '../src/donations/donation-repository';
import { nonRetryableErrorTypes } from './contracts';

export interface ReversalInput {
  donationId: string;
  campaignId: string;
  kind: 'REFUND' | 'CHARGEBACK';
  amount: number;
  reason: string;
  /** An operator's refund is made at the provider first; a provider's event already happened. */
  source: 'operator' | 'provider';
  provider: string;
  providerReference: string;
}

const { refundPayment, recordReversal } = proxyActivities<DonationActivities>({
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    nonRetryableErrorTypes,
  },
});

const { invalidateCampaignCache } = proxyActivities<DonationActivities>({
  startToCloseTimeout: '5 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds', maximumAttempts: 5 },
});

/** The workflow ID of a reversal: one refund and one chargeback per donation, at most. */
export function reversalWorkflowId(kind: ReversalInput['kind'], donationId: string): string {
  return `reversal-${kind.toLowerCase()}-${donationId}`;
}

/**
 * Reverses a confirmed donation whose workflow has finished: refunds at the provider when an
 * operator asked, then writes the reversing ledger entry and lowers the campaign total, once.
 */
export async function reversalWorkflow(input: ReversalInput): Promise<ReversalResult> {
  if (input.source === 'operator' && input.kind === 'REFUND') {
    await refundPayment({
      donationId: input.donationId,
      provider: input.provider,
      providerReference: input.providerReference,
      amount: input.amount,
      reason: input.reason,
    });
  }
  const result = await recordReversal(input.donationId, input.kind, input.amount);
  await invalidateCampaignCache(input.campaignId).catch(() => undefined);
  return result;
}
