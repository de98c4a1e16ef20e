import type { WorkflowStartOptions } from '@temporalio/client';
import {
  CampaignIdAttribute,
  DonationStatusAttribute,
  ProviderAttribute,
} from '../../workflows/contracts';
import type { DonationInput, DonationStatus, DonationWorkflow } from '../../workflows/contracts';

/**
 * What every start of a donation's workflow shares, from the edge or from reconciliation's
 * hand-back: its derived ID, its input, the memo the logs and the ops CLI read, and the search
 * attributes operators filter by. Callers add the ID policies that fit them.
 */
export function donationStartOptions(
  input: DonationInput,
  taskQueue: string,
  options: { status: DonationStatus; memo?: Record<string, unknown> },
): Pick<
  WorkflowStartOptions<DonationWorkflow>,
  'workflowId' | 'taskQueue' | 'args' | 'memo' | 'typedSearchAttributes'
> {
  return {
    workflowId: input.workflowId,
    taskQueue,
    args: [input],
    memo: { correlationId: input.correlationId, clientId: input.clientId, ...options.memo },
    typedSearchAttributes: [
      { key: CampaignIdAttribute, value: input.campaignId },
      { key: DonationStatusAttribute, value: options.status },
      { key: ProviderAttribute, value: input.provider },
    ],
  };
}
