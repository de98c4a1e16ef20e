/** Every workflow the worker registers; the worker bundles this file for the sandbox. */
export {
  donationWorkflow,
  getStateQuery,
  paymentActionUpdate,
  paymentEventSignal,
} from './donation-workflow';
export type { DonationOutcome, DonationState, PaymentActionResult } from './donation-workflow';
export { reversalWorkflow, reversalWorkflowId } from './reversal-workflow';
export type { ReversalInput } from './reversal-workflow';
export { reconciliationWorkflow } from './reconciliation-workflow';
