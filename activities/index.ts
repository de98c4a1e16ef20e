export { createDonationActivities } from './donation-activities';
export type { DonationActivities, DonationActivityDeps } from './donation-activities';
export { createReconciliationActivities } from './reconciliation-activities';
export type {
  ReconciliationActivities,
  ReconciliationActivityDeps,
} from './reconciliation-activities';
