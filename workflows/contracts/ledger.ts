/** Credits are positive, reversals negative; a `_REVERSAL` gives a reversal's money back. */
export type LedgerEntryType =
  'DONATION' | 'REFUND' | 'REFUND_REVERSAL' | 'CHARGEBACK' | 'CHARGEBACK_REVERSAL';

/** One reversal entry, with the amount as the provider reports it (positive, minor units). */
export interface Posting {
  entryType: Exclude<LedgerEntryType, 'DONATION'>;
  /** The provider's refund or dispute id. */
  externalRef: string;
  amount: number;
}

/**
 * Why a credited donation is held when its provider took money without saying how much
 * (Midtrans' `partial_chargeback`): only a chargeback that states it ends the hold.
 */
export const UNSTATED_CHARGEBACK_HOLD = 'chargeback-amount-unstated';

/**
 * The holds the ledger keeps through later postings, each with the posting that ends it (its
 * type and the net it leaves). Any other NEEDS_REVIEW ends at the next posting, the status
 * derived from the net again. A late payment galang could not give back stays held until its
 * money has left (a refund or a chargeback took it all), so nothing else quietly keeps it.
 */
export const KEPT_HOLDS: Readonly<
  Record<string, (posted: Posting['entryType'], net: number) => boolean>
> = {
  [UNSTATED_CHARGEBACK_HOLD]: (posted) => posted === 'CHARGEBACK',
  'late-payment-refund-refused': (_posted, net) => net <= 0,
  'late-payment-refund-failed': (_posted, net) => net <= 0,
  'late-payment-refund-unsettled': (_posted, net) => net <= 0,
};

/** Whether a held donation's `failure_reason` is one of the {@link KEPT_HOLDS}. */
export function isKeptHold(reason: string | null): reason is string {
  return reason !== null && Object.hasOwn(KEPT_HOLDS, reason);
}
