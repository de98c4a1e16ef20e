import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { receiptMailWorkflowId, WorkflowType } from '../../workflows/contracts';
import type { ReceiptMailWorkflow } from '../../workflows/contracts';

/** Starts a mail batch's workflow once: its ID is the batch's. */
export class ReceiptWorkflows {
  constructor(
    private readonly temporal: Client,
    private readonly taskQueue: string,
  ) {}

  /** True when this call started it; false when it ran or runs already. */
  async startMailBatch(batch: string): Promise<boolean> {
    try {
      await this.temporal.workflow.start<ReceiptMailWorkflow>(WorkflowType.receiptMail, {
        workflowId: receiptMailWorkflowId(batch),
        taskQueue: this.taskQueue,
        args: [batch],
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
      });
      return true;
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return false;
      throw error;
    }
  }
}
