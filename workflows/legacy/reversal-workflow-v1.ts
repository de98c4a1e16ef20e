import { proxyActivities } from '@temporalio/workflow';
import type { LegacyActivities, LegacyReversalResult } from '../../activities/legacy-activities';
import { cacheActivity, moneyActivity } from '../retry-policies';

/** The reversal workflow's input before money-v2. */
export interface ReversalInputV1 {
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

const { refundPayment, recordReversal } = proxyActivities<LegacyActivities>(moneyActivity);
const { invalidateCampaignCache } = proxyActivities<LegacyActivities>(cacheActivity);

/**
 * Reverses a confirmed donation whose workflow has finished: refunds at the provider when an
 * operator asked, then writes the reversing ledger entry and lowers the campaign total, once.
 */
export async function reversalWorkflowV1(input: ReversalInputV1): Promise<LegacyReversalResult> {
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
