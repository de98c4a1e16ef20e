import { randomUUID } from 'node:crypto';
import { Context } from '@temporalio/activity';
import type { MailDeliveryRepository } from '../src/receipts/mail-delivery-repository';
import type { ReceiptIssuer, ReceiptRepository } from '../src/receipts/receipt-repository';
import type { ReceiptWorkflows } from '../src/receipts/receipt-workflows';
import type { WorkerMetrics } from '../src/temporal/worker-metrics';
import type { MailBatchCounts } from '../workflows/contracts';

/** The activity's attempt, told of before each document: it stops once cancelled or timed out. */
export interface BatchAttempt {
  readonly signal: AbortSignal;
  heartbeat(): void;
}

/** Sends a batch's documents, recording each delivery (src/receipts/receipt-mailer.ts). */
export interface ReceiptSender {
  sendBatch(batch: string, attempt?: BatchAttempt): Promise<MailBatchCounts>;
  /** Records what a batch still holds as failed; how many documents that was. */
  failBatch(batch: string, error: string): Promise<number>;
}

export interface ReceiptActivityDeps {
  receipts: ReceiptRepository;
  mailDeliveries: MailDeliveryRepository;
  issuer: ReceiptIssuer;
  receiptWorkflows: ReceiptWorkflows;
  sender: ReceiptSender;
  metrics: Pick<WorkerMetrics, 'receiptMails'>;
}

/** A claimed batch whose workflow is not seen by then is started again. */
const STRANDED_AFTER_SECONDS = 60;

/** The receipts' activities, built from their dependencies. */
export function createReceiptActivities(deps: ReceiptActivityDeps) {
  return {
    /** Numbers one batch of queued ledger entries. */
    async issueReceipts(limit: number): Promise<{ issued: number; more: boolean }> {
      const batch = await deps.receipts.issueDue(deps.issuer, limit);
      return { issued: batch.issued.length, more: batch.more };
    },

    /**
     * Gives up to `limit` queued documents to a new mail batch and starts its workflow. A
     * crash between the claim and the start leaves the batch stranded; the next run starts it
     * (and any other such), which the batch's workflow ID makes a no-op when it did start.
     */
    async dispatchReceiptMail(limit: number): Promise<{ claimed: number; more: boolean }> {
      for (const stranded of await deps.mailDeliveries.strandedBatches(STRANDED_AFTER_SECONDS)) {
        await deps.receiptWorkflows.startMailBatch(stranded);
      }
      const batch = randomUUID();
      const claimed = await deps.mailDeliveries.claimBatch(batch, limit);
      if (claimed > 0) await deps.receiptWorkflows.startMailBatch(batch);
      return { claimed, more: claimed === limit };
    },

    async sendReceiptMails(batch: string): Promise<MailBatchCounts> {
      const context = Context.current();
      const counts = await deps.sender.sendBatch(batch, {
        signal: context.cancellationSignal,
        heartbeat: () => {
          context.heartbeat();
        },
      });
      for (const [outcome, count] of Object.entries(counts)) {
        if (count > 0) deps.metrics.receiptMails.add(count, { outcome });
      }
      return counts;
    },

    async recordMailFailures(batch: string, error: string): Promise<number> {
      const failed = await deps.sender.failBatch(batch, error.slice(0, 1000));
      deps.metrics.receiptMails.add(failed, { outcome: 'failed' });
      return failed;
    },
  };
}

export type ReceiptActivities = ReturnType<typeof createReceiptActivities>;
