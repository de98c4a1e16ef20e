import { ActivityFailure, proxyActivities } from '@temporalio/workflow';
import type { ReceiptActivities } from '../activities/receipt-activities';
import type { MailBatchCounts, ReceiptsReport } from './contracts';
import { mailActivity, receiptActivity } from './retry-policies';

const { issueReceipts, dispatchReceiptMail, recordMailFailures } =
  proxyActivities<ReceiptActivities>(receiptActivity);
const { sendReceiptMails } = proxyActivities<ReceiptActivities>(mailActivity);

/** Documents per numbering transaction and per mail batch, and rounds per run (the next goes on). */
const BATCH = 200;
const MAX_BATCHES = 25;

/**
 * One numbering run of the organization's receipts and credit notes, started by the worker's
 * schedule, which never overlaps two (and the numbering's lock holds any other writer): ledger
 * entries in ledger order, in batches, each batch's documents then given to a mail batch.
 */
export async function receiptsWorkflow(): Promise<ReceiptsReport> {
  const report: ReceiptsReport = { issued: 0, mailed: 0 };
  for (let i = 0; i < MAX_BATCHES; i++) {
    const batch = await issueReceipts(BATCH);
    const mail = await dispatchReceiptMail(BATCH);
    report.issued += batch.issued;
    report.mailed += mail.claimed;
    if (!batch.more && !mail.more) break;
  }
  return report;
}

/**
 * One batch's e-mails: one workflow for up to {@link BATCH} documents, not one each, so a
 * confirmation costs Temporal a share of one. The activity records each delivery before and
 * after its SMTP exchange, so a retry or a reset sends nothing already sent; what is still
 * unsent when every attempt is used is recorded as failed, where metrics and
 * `npm run ops -- mail` show it.
 */
export async function receiptMailWorkflow(batch: string): Promise<MailBatchCounts> {
  try {
    return await sendReceiptMails(batch);
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    const failed = await recordMailFailures(batch, error.cause?.message ?? error.message);
    return { sent: 0, 'sent-before': 0, 'no-address': 0, failed };
  }
}
