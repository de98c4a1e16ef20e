/** Every activity the worker registers; only the worker imports this barrel. */
export type { ActivityDeps, LatePaymentPolicy } from './activity-deps';
export { createDonationActivities } from './donation-activities';
export type { DonationActivities, PaymentStart } from './donation-activities';
export { createReconciliationActivities } from './reconciliation-activities';
export type {
  ReconciliationActivities,
  ReconciliationActivityDeps,
} from './reconciliation-activities';
export { createReversalActivities } from './reversal-activities';
export type { ReversalActivities } from './reversal-activities';
export { createReceiptActivities } from './receipt-activities';
export type { ReceiptActivities, ReceiptActivityDeps, ReceiptSender } from './receipt-activities';
export { createPledgeActivities } from './pledge-activities';
export type { PledgeActivities, PledgeActivityDeps } from './pledge-activities';
