import type { DonationStatus } from '../../workflows/contracts';
import type { LedgerEntryType } from '../../workflows/contracts';

/** What a donation's ledger entries add up to. */
export interface LedgerNet {
  /** The sum of the signed entries, in minor units. */
  net: number;
  /** Disputes whose amount was withdrawn and not given back. */
  openChargebacks: number;
}

/**
 * A credited donation's status follows its money, not the name of the last event: the whole
 * amount is CONFIRMED, part of it PARTIALLY_REFUNDED, nothing left CHARGED_BACK while a dispute
 * holds it, else REFUNDED. Below zero (a dispute larger than what refunds left) the provider
 * took more than galang kept: NEEDS_REVIEW, for an operator.
 */
export function statusFromNet(amount: number, ledger: LedgerNet): DonationStatus {
  if (ledger.net < 0) return 'NEEDS_REVIEW';
  if (ledger.net >= amount) return 'CONFIRMED';
  if (ledger.net > 0) return 'PARTIALLY_REFUNDED';
  return ledger.openChargebacks > 0 ? 'CHARGED_BACK' : 'REFUNDED';
}

/** The sign each entry type carries, so callers pass amounts as the provider reports them. */
export const entrySign: Record<LedgerEntryType, 1 | -1> = {
  DONATION: 1,
  REFUND: -1,
  REFUND_REVERSAL: 1,
  CHARGEBACK: -1,
  CHARGEBACK_REVERSAL: 1,
};

/** A reversal's give-back needs the reversal it undoes (same external ref) to be posted first. */
export const undoes: Partial<Record<LedgerEntryType, LedgerEntryType>> = {
  REFUND_REVERSAL: 'REFUND',
  CHARGEBACK_REVERSAL: 'CHARGEBACK',
};
