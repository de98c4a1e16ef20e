import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { receiptMailWorkflowId, WorkflowType } from '../../workflows/contracts';
import type { ReceiptMailWorkflow } from '../../workflows/contracts';

/**
 * The task queue of receipts' numbering and mail, beside the donations' own: a process that
 * polls only it (src/runtime/worker-processes.ts) can yield its CPU to donations in a rush.
 */
export function receiptsTaskQueue(donationsTaskQueue: string): string {
  return `${donationsTaskQueue}-receipts`;
}

/** Starts a mail batch's workflow once, on the receipts' task queue: its ID is the batch's. */
export class ReceiptWorkflows {
  constructor(
    private readonly temporal: Client,
    private readonly taskQueue: string,
  ) {}

  /** True when this call started it; false when it runs, or ran to its end, already. */
  async startMailBatch(batch: string): Promise<boolean> {
    try {
      await this.temporal.workflow.start<ReceiptMailWorkflow>(WorkflowType.receiptMail, {
        workflowId: receiptMailWorkflowId(batch),
        taskQueue: this.taskQueue,
        args: [batch],
        // A batch that ran to its end leaves nothing queued; one terminated may run again.
        workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY',
      });
      return true;
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) return false;
      throw error;
    }
  }
}
