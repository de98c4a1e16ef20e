/** Every workflow the worker registers; the worker bundles this file for the sandbox. */
export { donationWorkflow } from './donation-workflow';
export { latePaymentWorkflow } from './late-payment-workflow';
export { paymentSyncWorkflow } from './payment-sync-workflow';
export { pledgePeriodWorkflow } from './pledge-period-workflow';
export { reconciliationWorkflow } from './reconciliation-workflow';
export { receiptMailWorkflow, receiptsWorkflow } from './receipts-workflow';
export { refundRequestWorkflow } from './refund-request-workflow';
export { reversalWorkflow } from './reversal-workflow';
