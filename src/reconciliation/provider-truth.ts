import { isClosedWithoutMoney, paymentReversalEvent } from '../../workflows/contracts';
import type {
  DisputeEvent,
  LedgerEntryType,
  PaymentEvent,
  PaymentRef,
  PaymentSnapshot,
  RefundEvent,
} from '../../workflows/contracts';
import type { Donation } from '../donations/donation';
import type { FollowUpWorkflows } from '../donations/follow-up-workflows';
import type { LedgerRepository, PostedEntry } from '../ledger/ledger-repository';
import type { PaymentProvider } from '../providers/payment-provider';

export interface ProviderTruthDeps {
  ledger: Pick<LedgerRepository, 'entriesOf'>;
  followUps: Pick<FollowUpWorkflows, 'followReversal' | 'startLatePayment'>;
}

/**
 * Reads a payment's record at its provider and hands what the ledger lacks to the workflows
 * that post it: refunds and disputes, a reversed payment, a late payment (a dead letter's too).
 * Each target is keyed by the provider's ids, so reading twice follows nothing twice. Answers
 * how many were handed on.
 */
export async function followProviderTruth(
  deps: ProviderTruthDeps,
  provider: PaymentProvider,
  ref: PaymentRef,
  donation: Donation,
): Promise<number> {
  const truth = await provider.fetchPayment(ref.providerReference);
  const now = new Date().toISOString();
  const posted = await deps.ledger.entriesOf(ref.donationId);
  const events = lackingReversals(truth, posted, now);
  const payment: PaymentEvent = {
    kind: 'payment',
    eventKey: `truth:${truth.providerReference}:${truth.status}`,
    providerReference: truth.providerReference,
    status: truth.status,
    amount: truth.amount,
    currency: truth.currency,
    occurredAt: now,
  };
  const reversed = paymentReversalEvent(payment);
  const credited = donation.confirmedAt !== null;
  if (
    credited &&
    truth.status === 'DECLINED' &&
    !posted.some((e) => e.externalRef === reversed.disputeId)
  ) {
    events.push(reversed);
  }
  for (const event of events) await deps.followUps.followReversal(ref, event);
  const unpaid = isClosedWithoutMoney(donation.status) || donation.deadLetteredAt !== null;
  if (!credited && truth.status === 'PAID' && unpaid) {
    const { amount, currency } = donation;
    await deps.followUps.startLatePayment({ ...ref, event: payment, amount, currency });
    return events.length + 1;
  }
  return events.length;
}

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
