import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { receiptMailWorkflowId, WorkflowType } from '../../workflows/contracts';
import type { ReceiptMailWorkflow } from '../../workflows/contracts';

/** Starts a document's mail workflow once: its ID is the document's number. */
export class ReceiptWorkflows {
  constructor(
    private readonly temporal: Client,
    private readonly taskQueue: string,
  ) {}

  /**
   * True when this call started it; false when it ran or runs already. `again` (an operator's
   * resend) starts one past a closed run: the delivery row still refuses a second send.
   */
  async startMail(number: string, options: { again?: boolean } = {}): Promise<boolean> {
    try {
      await this.temporal.workflow.start<ReceiptMailWorkflow>(WorkflowType.receiptMail, {
        workflowId: receiptMailWorkflowId(number),
        taskQueue: this.taskQueue,
        args: [number],
        workflowIdReusePolicy: options.again ? 'ALLOW_DUPLICATE' : 'REJECT_DUPLICATE',
      });
      return true;
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return false;
      throw error;
    }
  }
}
