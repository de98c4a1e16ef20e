import {
  WorkflowFailedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import type { Client } from '@temporalio/client';
import {
  donationWorkflowId,
  paymentActionUpdate,
  paymentActionUpdateId,
} from '../../workflows/contracts';
import type { DonationWorkflow, PaymentActionResult } from '../../workflows/contracts';

/**
 * What a caller that follows a donation asks its workflow (a pledge's period: the payment
 * action to send the donor, the donation's end); the edge's start is DonationService's.
 */
export class RunningDonations {
  constructor(private readonly temporal: Client) {}

  /**
   * The donation's payment action, once its payment exists (the update a donor's request waits
   * on, joined by its ID); undefined when the donation was refused or its workflow has closed.
   */
  async paymentAction(donationId: string): Promise<PaymentActionResult | undefined> {
    try {
      return await this.temporal.workflow
        .getHandle<DonationWorkflow>(donationWorkflowId(donationId))
        .executeUpdate(paymentActionUpdate, { updateId: paymentActionUpdateId(donationId) });
    } catch (error) {
      if (error instanceof WorkflowUpdateFailedError || error instanceof WorkflowNotFoundError) {
        return undefined;
      }
      throw error;
    }
  }

  /** Waits until the donation's workflow has closed, however it ended: its row says how. */
  async awaitClosed(donationId: string): Promise<void> {
    try {
      await this.temporal.workflow.getHandle(donationWorkflowId(donationId)).result();
    } catch (error) {
      if (!(error instanceof WorkflowFailedError)) throw error;
    }
  }
}
