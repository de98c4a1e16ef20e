import type {
  DisputeEvent,
  LedgerEntryType,
  PaymentSnapshot,
  RefundEvent,
} from '../../workflows/contracts';
import type { PostedEntry } from '../ledger/ledger-repository';

/**
 * The refunds and disputes in the provider's record of a payment that the ledger does not show
 * in their current state: each becomes an event for its reversal workflow, which reads the
 * provider again and posts once. A notification that never came (or, on Stripe endpoints older
 * than 2024-10-28, one that came only as `charge.refunded`) is repaired this way.
 */
export function lackingReversals(
  snapshot: PaymentSnapshot,
  posted: readonly PostedEntry[],
  occurredAt: string,
): (RefundEvent | DisputeEvent)[] {
  const has = (entryType: LedgerEntryType, ref: string) =>
    posted.some((e) => e.entryType === entryType && e.externalRef === ref);
  const base = {
    providerReference: snapshot.providerReference,
    currency: snapshot.currency,
    occurredAt,
  };
  const refunds = snapshot.refunds
    .filter((r) =>
      r.status === 'PENDING'
        ? true
        : r.status === 'SUCCEEDED'
          ? !has('REFUND', r.refundId)
          : has('REFUND', r.refundId) && !has('REFUND_REVERSAL', r.refundId),
    )
    .map((r): RefundEvent => ({
      ...base,
      kind: 'refund',
      eventKey: `truth:${r.refundId}:${r.status}`,
      refundId: r.refundId,
      status: r.status,
      amount: r.amount,
    }));
  const disputes = snapshot.disputes
    .filter((d) =>
      d.status === 'WON'
        ? !has('CHARGEBACK_REVERSAL', d.disputeId)
        : !has('CHARGEBACK', d.disputeId),
    )
    .map((d): DisputeEvent => ({
      ...base,
      kind: 'dispute',
      eventKey: `truth:${d.disputeId}:${d.status}`,
      disputeId: d.disputeId,
      status: d.status,
      amount: d.amount,
      ...(d.amountUnstated ? { amountUnstated: true } : {}),
    }));
  return [...refunds, ...disputes];
}
