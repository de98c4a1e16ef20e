import type { ReconciliationReport } from './reconciliation';
import type { MailBatchCounts, ReceiptsReport } from './receipts';
import type { DonationInput, DonationOutcome } from './donation-workflow';
import type { PledgePeriodInput, PledgePeriodOutcome } from './pledges';
import type {
  LatePaymentInput,
  LatePaymentResult,
  PaymentRef,
  PaymentSyncResult,
  RefundRequestInput,
  RefundRequestResult,
  ReversalInput,
  ReversalResult,
} from './reversal-workflows';

/**
 * Every workflow's registered name and signature. Clients start workflows by these names with
 * these types, so nothing outside `workflows/` imports a workflow implementation.
 */
export const WorkflowType = {
  donation: 'donationWorkflow',
  reversal: 'reversalWorkflow',
  refundRequest: 'refundRequestWorkflow',
  latePayment: 'latePaymentWorkflow',
  reconciliation: 'reconciliationWorkflow',
  paymentSync: 'paymentSyncWorkflow',
  receipts: 'receiptsWorkflow',
  receiptMail: 'receiptMailWorkflow',
  pledgePeriod: 'pledgePeriodWorkflow',
} as const;

export type DonationWorkflow = (input: DonationInput) => Promise<DonationOutcome>;
export type ReversalWorkflow = (input: ReversalInput) => Promise<ReversalResult>;
export type RefundRequestWorkflow = (input: RefundRequestInput) => Promise<RefundRequestResult>;
export type LatePaymentWorkflow = (input: LatePaymentInput) => Promise<LatePaymentResult>;
export type ReconciliationWorkflow = () => Promise<ReconciliationReport>;
export type PaymentSyncWorkflow = (ref: PaymentRef) => Promise<PaymentSyncResult>;
export type ReceiptsWorkflow = () => Promise<ReceiptsReport>;
export type ReceiptMailWorkflow = (batch: string) => Promise<MailBatchCounts>;
export type PledgePeriodWorkflow = (input: PledgePeriodInput) => Promise<PledgePeriodOutcome>;
