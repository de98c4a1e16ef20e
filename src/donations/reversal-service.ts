import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { AppError } from '../errors/error-catalogue';
import type { Donation } from './donation';
import { reversalWorkflowId } from '../../workflows/reversal-workflow';
import type { ReversalInput, reversalWorkflow } from '../../workflows/reversal-workflow';

export interface ReversalRequest {
  kind: ReversalInput['kind'];
  amount: number;
  reason: string;
  source: ReversalInput['source'];
}

/**
 * Starts the one reversal workflow of a kind for a donation. Its ID derives from the donation,
 * so an operator's double click, a retried request and the provider's own refund notification
 * all meet the same workflow.
 */
export async function startReversal(
  temporal: Client,
  taskQueue: string,
  donation: Donation,
  request: ReversalRequest,
): Promise<string> {
  if (!donation.providerReference) throw new AppError('donation-not-refundable');
  const workflowId = reversalWorkflowId(request.kind, donation.id);
  const input: ReversalInput = {
    donationId: donation.id,
    campaignId: donation.campaignId,
    kind: request.kind,
    amount: Math.min(request.amount, donation.amount),
    reason: request.reason,
    source: request.source,
    provider: donation.provider,
    providerReference: donation.providerReference,
  };
  try {
    await temporal.workflow.start<typeof reversalWorkflow>('reversalWorkflow', {
      workflowId,
      taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
  } catch (error) {
    // Done before: the reversal happened once and will not happen again.
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
  return workflowId;
}
