/**
 * What the reference model predicts, in the terms the driver compares with the stack: the
 * donation's status, its ledger entries by logical name, its campaign's total.
 */
import type { DonationStatus, ReversalOutcome } from '../../workflows/contracts';
import type { SimPaymentStatus } from './history';

export type LedgerEntryType =
  'DONATION' | 'REFUND' | 'REFUND_REVERSAL' | 'CHARGEBACK' | 'CHARGEBACK_REVERSAL';

/** A ledger entry; `ref` is `payment` for the DONATION, else the refund's or dispute's name. */
export interface ExpectedEntry {
  type: LedgerEntryType;
  ref: string;
  amount: number;
}

export interface Expected {
  status: DonationStatus;
  /** In the order the model posts them; compare them sorted (see {@link sortEntries}). */
  entries: ExpectedEntry[];
  /** The sum of the entries. */
  net: number;
  /** The campaign's total when this donation is its only one. */
  campaign: { amount: number; count: number };
  /** Each refund's and dispute's end, by name. */
  reversals: Record<string, ReversalOutcome>;
}

/** Thrown for a history no provider could produce; the generator must never make one. */
export class ImpossibleHistory extends Error {
  constructor(step: number, why: string) {
    super(`step ${step}: ${why}`);
    this.name = 'ImpossibleHistory';
  }
}

export type Phase =
  /** Waiting for the payment, until the deadline. */
  | 'open'
  /** Past the deadline, the cancel refused: still checking until the settle horizon. */
  | 'horizon'
  /** The donation workflow has decided. */
  | 'closed';

/** What the generator may ask of the model while it builds a history. */
export interface ModelView {
  payment: SimPaymentStatus;
  phase: Phase;
  /** The donation's campaign still takes donations. */
  campaignOpen: boolean;
  /** A success now would be a late payment to a closed campaign that galang refunds. */
  refundsSuccess: boolean;
  status: DonationStatus;
  credited: boolean;
  /** What the provider still lets be refunded or disputed. */
  refundable: number;
  /** What a bank may still dispute: refunds do not reduce it. */
  disputable: number;
  pendingRefunds: string[];
  succeededRefunds: string[];
  openDisputes: string[];
  refundCount: number;
  disputeCount: number;
}

/** Entries in one canonical order, so the model's and the ledger's can be compared. */
export function sortEntries<T extends { type: string; ref: string; amount: number }>(
  entries: readonly T[],
): T[] {
  const key = (e: T) => `${e.type}|${e.ref}|${e.amount}`;
  return [...entries].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
