import type { MailDeliveryRepository } from '../src/receipts/mail-delivery-repository';
import type { ReceiptIssuer, ReceiptRepository } from '../src/receipts/receipt-repository';
import type { ReceiptWorkflows } from '../src/receipts/receipt-workflows';
import type { WorkerMetrics } from '../src/temporal/worker-metrics';
import type { ReceiptMailResult } from '../workflows/contracts';

/** Sends one document's e-mail, recording its delivery (src/receipts/receipt-mailer.ts). */
export interface ReceiptSender {
  send(number: string): Promise<Exclude<ReceiptMailResult, 'failed'>>;
}

export interface ReceiptActivityDeps {
  receipts: ReceiptRepository;
  mailDeliveries: MailDeliveryRepository;
  issuer: ReceiptIssuer;
  receiptWorkflows: ReceiptWorkflows;
  sender: ReceiptSender;
  metrics: Pick<WorkerMetrics, 'receiptMails'>;
}

/** The receipts' activities, built from their dependencies. */
export function createReceiptActivities(deps: ReceiptActivityDeps) {
  return {
    /** Numbers one batch of queued ledger entries. */
    async issueReceipts(limit: number): Promise<{ issued: number; more: boolean }> {
      const batch = await deps.receipts.issueDue(deps.issuer, limit);
      return { issued: batch.issued.length, more: batch.more };
    },

    /**
     * Starts the mail workflow of each queued document, then takes it off the queue: a crash in
     * between starts it again, which its ID makes a no-op.
     */
    async dispatchReceiptMail(limit: number): Promise<{ started: number; more: boolean }> {
      const numbers = await deps.mailDeliveries.mailQueue(limit);
      let started = 0;
      for (const number of numbers) {
        if (await deps.receiptWorkflows.startMail(number)) started++;
      }
      await deps.mailDeliveries.dropFromMailQueue(numbers);
      return { started, more: numbers.length === limit };
    },

    async sendReceiptMail(number: string): Promise<ReceiptMailResult> {
      const result = await deps.sender.send(number);
      deps.metrics.receiptMails.add(1, { outcome: result });
      return result;
    },

    async recordMailFailure(number: string, error: string): Promise<void> {
      await deps.mailDeliveries.endDelivery(number, 'failed', error.slice(0, 1000));
      deps.metrics.receiptMails.add(1, { outcome: 'failed' });
    },
  };
}

export type ReceiptActivities = ReturnType<typeof createReceiptActivities>;
