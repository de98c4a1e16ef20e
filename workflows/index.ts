/** Every workflow the worker registers; the worker bundles this file for the sandbox. */
export { donationWorkflow, paymentEventSignal, getStateQuery } from './donation-workflow';
export type { DonationOutcome, DonationState } from './donation-workflow';
