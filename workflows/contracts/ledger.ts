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
