export { createDonationActivities } from './donation-activities';
export type { DonationActivities, DonationActivityDeps } from './donation-activities';
