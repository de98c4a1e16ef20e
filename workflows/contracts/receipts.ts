/** What one numbering run did: documents numbered, mail workflows started. */
export interface ReceiptsReport {
  issued: number;
  mailed: number;
}

/** How a document's mail ended. */
export type ReceiptMailResult = 'sent' | 'sent-before' | 'no-address' | 'failed';

/** The run the schedule starts per organization: one writer of its sequences at a time. */
export function receiptsWorkflowId(prefix: string, taskQueue: string): string {
  return `receipts:${prefix}:${taskQueue}`;
}

/** One mail per document: a second start meets the first. */
export function receiptMailWorkflowId(number: string): string {
  return `receipt-mail-${number}`;
}
