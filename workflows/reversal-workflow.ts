import { condition, proxyActivities, setHandler } from '@temporalio/workflow';
import type { DonationActivities } from '../activities/donation-activities';
import type { ReversalActivities } from '../activities/reversal-activities';
import {
  UNSTATED_CHARGEBACK_HOLD,
  isClosedWithoutMoney,
  isOpen,
  paymentReversalId,
  reversalEventSignal,
} from './contracts';
import type {
  DisputeEvent,
  DisputeStatus,
  DonationStatus,
  Posting,
  RefundEvent,
  RefundStatus,
  ReversalInput,
  ReversalResult,
} from './contracts';
import { countNeedsReview } from './needs-review-metric';
import { moneyActivity } from './retry-policies';

const { postReversal, donationStatus, holdForReview } =
  proxyActivities<ReversalActivities>(moneyActivity);
const { fetchPayment } = proxyActivities<DonationActivities>(moneyActivity);

/** A refund still pending, or money not credited yet, is followed this long before review. */
export const FOLLOW_HORIZON_MS = 7 * 24 * 3600 * 1000;
const MAX_CHECK_INTERVAL_MS = 60 * 60 * 1000;

const refundRank: Record<RefundStatus, number> = { PENDING: 0, SUCCEEDED: 1, FAILED: 2 };
const disputeRank: Record<DisputeStatus, number> = { OPEN: 0, WON: 1, LOST: 1 };

type MoneyEvent = RefundEvent | DisputeEvent;

/** What galang may act on: the provider's record, or the event when it proves itself. */
interface Known {
  status: RefundStatus | DisputeStatus;
  amount: number;
  amountUnstated?: boolean | undefined;
  /** The provider's record shows the event was stale: nothing to post. */
  nothingMoved?: boolean;
}

/**
 * Follows one provider refund or dispute to its end and posts its ledger entries once, whatever
 * the donation's own workflow is doing. Started (or signalled) by the webhook intake, an operator
 * refund or reconciliation under an ID derived from the provider's refund or dispute id.
 */
export async function reversalWorkflow(input: ReversalInput): Promise<ReversalResult> {
  let latest: MoneyEvent = input.event;
  let fresh = false;
  setHandler(reversalEventSignal, (event) => {
    if (isLater(latest, event)) latest = event;
    fresh = true;
  });

  const started = Date.now();
  let interval = 2_000;
  for (;;) {
    const acting = latest;
    const known = await current(input, acting);
    if (known?.nothingMoved) {
      return {
        outcome: 'no-money-moved',
        donationStatus: (await donationStatus(input.donationId)).status,
      };
    }
    if (known?.amountUnstated) {
      // Money left, but how much is unknown: held for an operator until the provider says.
      const held = await holdForReview(input.donationId, UNSTATED_CHARGEBACK_HOLD);
      if (latest !== acting) {
        fresh = false;
        continue;
      }
      if (held.held) return needsReview(UNSTATED_CHARGEBACK_HOLD, held.status);
      const donation = await donationStatus(input.donationId);
      if (donation.credited) continue; // credited since the hold looked: hold it now
      if (!mayStillBeCredited(donation.status)) {
        return needsReview('reversal-of-uncredited-payment', donation.status);
      }
    } else if (known && isFinal(acting.kind, known.status)) {
      const posted = await postReversal(input.donationId, postingsFor(acting, known));
      if (latest !== acting) {
        // A later state came while this one was posted (a dispute won right after it opened):
        // ending now would leave it unhandled in a closed run, so it is followed too.
        fresh = false;
        continue;
      }
      switch (posted.refused) {
        case undefined:
          // Posted as the provider moved it; below zero the donation is NEEDS_REVIEW (derived
          // from the net) and an operator settles the difference.
          if (posted.overdrawn && posted.inserted > 0) countNeedsReview('reversal-exceeds-net');
          return { outcome: 'posted', donationStatus: posted.status };
        case 'nothing-to-undo':
          return { outcome: 'no-money-moved', donationStatus: posted.status };
        case 'out-of-range':
          return needsReview('reversal-exceeds-net', posted.status);
        case 'not-credited': {
          // Credited since the post looked: post again now. Else wait for the credit, while
          // one may still come.
          const donation = await donationStatus(input.donationId);
          if (donation.credited) continue;
          if (!mayStillBeCredited(donation.status)) {
            return needsReview('reversal-of-uncredited-payment', donation.status);
          }
        }
      }
    }
    if (Date.now() - started > FOLLOW_HORIZON_MS) {
      const donation = await donationStatus(input.donationId);
      const reason = donation.credited ? 'reversal-unsettled' : 'reversal-of-uncredited-payment';
      return needsReview(reason, donation.status);
    }
    await condition(() => fresh, interval);
    fresh = false;
    interval = Math.min(interval * 2, MAX_CHECK_INTERVAL_MS);
  }
}

/**
 * An uncredited donation still open, or closed without money while a late payment (the money
 * the provider now gives back came in) is yet to credit it; one held for review is an
 * operator's (a payment of another amount, say).
 */
function mayStillBeCredited(status: DonationStatus): boolean {
  return isOpen(status) || (isClosedWithoutMoney(status) && status !== 'NEEDS_REVIEW');
}

/**
 * The refund's or dispute's status and amount as far as galang may act on it: the provider's
 * own record when its notifications cannot prove themselves or the event leaves it pending,
 * else the (signed) event. Undefined while the provider does not know it.
 */
async function current(input: ReversalInput, event: MoneyEvent): Promise<Known | undefined> {
  // A signed dispute event is final; a refund's may be stale (Stripe: a refund succeeded, then
  // failed, its events out of order), so the refund itself is read.
  const reversal = isPaymentReversal(input, event);
  if (!reversal && !input.verifyWithProvider && event.kind === 'dispute') return event;
  const truth = await fetchPayment(input.provider, input.providerReference);
  if (reversal) {
    // A reversed payment is no dispute of the provider's: its own status is the proof. A stale
    // DECLINED of a payment the provider shows paid moved nothing.
    return truth.status === 'DECLINED'
      ? { status: 'LOST', amount: truth.amount }
      : { status: 'WON', amount: 0, nothingMoved: true };
  }
  const found =
    event.kind === 'refund'
      ? truth.refunds.find((r) => r.refundId === event.refundId)
      : truth.disputes.find((d) => d.disputeId === event.disputeId);
  if (found) return found;
  // A failed refund the provider never booked (Midtrans' bank denial) moved no money.
  if (!input.verifyWithProvider || event.status === 'FAILED') return event;
  return undefined;
}

function isPaymentReversal(input: ReversalInput, event: MoneyEvent): boolean {
  return event.kind === 'dispute' && event.disputeId === paymentReversalId(input.providerReference);
}

function isFinal(kind: MoneyEvent['kind'], status: RefundStatus | DisputeStatus): boolean {
  return kind === 'dispute' || status !== 'PENDING';
}

function isLater(current: MoneyEvent, next: MoneyEvent): boolean {
  if (current.kind === 'refund' && next.kind === 'refund') {
    return refundRank[next.status] > refundRank[current.status];
  }
  if (current.kind === 'dispute' && next.kind === 'dispute') {
    return disputeRank[next.status] > disputeRank[current.status];
  }
  return false;
}

/** The ledger entries a final refund or dispute calls for (see docs/donation-lifecycle.md). */
function postingsFor(event: MoneyEvent, known: Known): Posting[] {
  const amount = known.amount;
  if (event.kind === 'refund') {
    const externalRef = event.refundId;
    return known.status === 'SUCCEEDED'
      ? [{ entryType: 'REFUND', externalRef, amount }]
      : [{ entryType: 'REFUND_REVERSAL', externalRef, amount }];
  }
  const externalRef = event.disputeId;
  const withdrawn: Posting = { entryType: 'CHARGEBACK', externalRef, amount };
  return known.status === 'WON'
    ? [withdrawn, { entryType: 'CHARGEBACK_REVERSAL', externalRef, amount }]
    : [withdrawn];
}

function needsReview(
  reason: string,
  donationStatus: ReversalResult['donationStatus'],
): ReversalResult {
  countNeedsReview(reason);
  return { outcome: 'needs-review', donationStatus };
}
