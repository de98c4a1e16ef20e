/** A donation's status as Postgres keeps it and operators filter it. */
export const donationStatuses = [
  'PENDING',
  'AWAITING_PAYMENT',
  'CONFIRMED',
  'REFUNDED',
  'PARTIALLY_REFUNDED',
  'CHARGED_BACK',
  'FAILED',
  'EXPIRED',
  'CANCELED',
  'NEEDS_REVIEW',
] as const;
export type DonationStatus = (typeof donationStatuses)[number];

/** Statuses from which a payment can still be credited or given up by its workflow. */
export const OPEN_STATUSES = ['PENDING', 'AWAITING_PAYMENT'] as const satisfies DonationStatus[];

/** Endings without money that the donation workflow writes. */
export type FinalFailureStatus = Extract<
  DonationStatus,
  'FAILED' | 'EXPIRED' | 'CANCELED' | 'NEEDS_REVIEW'
>;
