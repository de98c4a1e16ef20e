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
export type OpenStatus = (typeof OPEN_STATUSES)[number];

/** Endings without money: a success that arrives for one of these is a late payment. */
export const CLOSED_WITHOUT_MONEY = [
  'FAILED',
  'EXPIRED',
  'CANCELED',
  'NEEDS_REVIEW',
] as const satisfies DonationStatus[];

/** Endings without money that the donation workflow writes. */
export type FinalFailureStatus = (typeof CLOSED_WITHOUT_MONEY)[number];

export function isOpen(status: string): status is OpenStatus {
  return (OPEN_STATUSES as readonly string[]).includes(status);
}

export function isClosedWithoutMoney(status: string): status is FinalFailureStatus {
  return (CLOSED_WITHOUT_MONEY as readonly string[]).includes(status);
}
