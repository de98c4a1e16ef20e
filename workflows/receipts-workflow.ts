import { ActivityFailure, proxyActivities } from '@temporalio/workflow';
import type { ReceiptActivities } from '../activities/receipt-activities';
import type { ReceiptMailResult, ReceiptsReport } from './contracts';
import { mailActivity, receiptActivity } from './retry-policies';

const { issueReceipts, dispatchReceiptMail } = proxyActivities<ReceiptActivities>(receiptActivity);
const { sendReceiptMail } = proxyActivities<ReceiptActivities>(mailActivity);
const { recordMailFailure } = proxyActivities<ReceiptActivities>(receiptActivity);

/** Documents per numbering transaction, and transactions per run (the next run goes on). */
const BATCH = 200;
const MAX_BATCHES = 25;

/**
 * One numbering run of the organization's receipts and credit notes, started by the worker's
 * schedule, which never overlaps two (and the numbering's lock holds any other writer): ledger
 * entries in ledger order, in batches, each batch's mail workflows started after it.
 */
export async function receiptsWorkflow(): Promise<ReceiptsReport> {
  const report: ReceiptsReport = { issued: 0, mailed: 0 };
  for (let i = 0; i < MAX_BATCHES; i++) {
    const batch = await issueReceipts(BATCH);
    const mail = await dispatchReceiptMail(BATCH);
    report.issued += batch.issued;
    report.mailed += mail.started;
    if (!batch.more && !mail.more) break;
  }
  return report;
}

/**
 * One document's e-mail. The activity records the delivery before and after the SMTP
 * exchange, so a retry or a reset sends nothing already sent; a send that failed for good is
 * recorded as failed, where metrics and `npm run ops -- mail` show it.
 */
export async function receiptMailWorkflow(number: string): Promise<ReceiptMailResult> {
  try {
    return await sendReceiptMail(number);
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    await recordMailFailure(number, error.cause?.message ?? error.message);
    return 'failed';
  }
}
