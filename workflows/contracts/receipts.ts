/** What one numbering run did: documents numbered, documents given to mail batches. */
export interface ReceiptsReport {
  issued: number;
  mailed: number;
}

/** How a document's mail ended. */
export type ReceiptMailResult = 'sent' | 'sent-before' | 'no-address' | 'failed';

/** How many of a mail batch's documents ended which way. */
export type MailBatchCounts = Record<ReceiptMailResult, number>;

/** The run the schedule starts per organization: one writer of its sequences at a time. */
export function receiptsWorkflowId(prefix: string, taskQueue: string): string {
  return `receipts:${prefix}:${taskQueue}`;
}

/** One workflow per mail batch: starting a batch again meets its first run. */
export function receiptMailWorkflowId(batch: string): string {
  return `receipt-mail-${batch}`;
}
