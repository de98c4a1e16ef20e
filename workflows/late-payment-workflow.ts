import {
  ActivityFailure,
  ChildWorkflowFailure,
  executeChild,
  log,
  proxyActivities,
  sleep,
} from '@temporalio/workflow';
import type { DonationActivities } from '../activities/donation-activities';
import type { ReversalActivities } from '../activities/reversal-activities';
import { refundRequestWorkflowId } from './contracts';
import type {
  DonationStatus,
  LatePaymentInput,
  LatePaymentResult,
  LateReviewReason,
  PaymentSnapshot,
  RefundRequestResult,
  ReversalOutcome,
} from './contracts';
import { refundRequestWorkflow } from './refund-request-workflow';
import { countNeedsReview } from './needs-review-metric';
import { moneyActivity } from './retry-policies';
import { FOLLOW_HORIZON_MS } from './reversal-workflow';

const { fetchPayment, confirmDonation } = proxyActivities<DonationActivities>(moneyActivity);
const {
  decideLatePayment,
  donationStatus,
  followProviderTruth,
  holdLateRefund,
  reversalOutcome,
  reviewLatePayment,
} = proxyActivities<ReversalActivities>(moneyActivity);

/** The refund request's own steps (ask, hand over) may retry through an outage this long. */
const REFUND_REQUEST_TIMEOUT = '1 day';
/** The refund's reversal follows it for FOLLOW_HORIZON_MS; a day more for it to say so. */
const REFUND_FOLLOW_HORIZON_MS = FOLLOW_HORIZON_MS + 24 * 3600 * 1000;
const MAX_CHECK_INTERVAL_MS = 60 * 60 * 1000;

/**
 * A payment that succeeded after its donation was closed (expired, canceled, failed): never
 * lost. The provider's status API confirms it first, whatever the notification said. Then it is
 * credited; if the campaign no longer takes it (or the policy says so) it is refunded in full
 * right after and the refund followed to its end: money the refund did not give back is held in
 * NEEDS_REVIEW for an operator, never kept silently.
 */
export async function latePaymentWorkflow(input: LatePaymentInput): Promise<LatePaymentResult> {
  const truth = await fetchPayment(input.provider, input.providerReference);
  if (truth.status !== 'PAID') {
    return { outcome: 'not-paid', donationStatus: (await donationStatus(input.donationId)).status };
  }
  if (truth.amount !== input.amount || truth.currency !== input.currency) {
    const reason = `late payment of ${truth.amount} ${truth.currency}, expected ${input.amount} ${input.currency}`;
    return review(
      input,
      'late-payment-amount-mismatch',
      await reviewLatePayment(input.donationId, reason),
    );
  }
  const decision = await decideLatePayment(input.donationId);
  if (decision === 'hold') {
    const reason = 'late payment to a closed campaign, not refundable by API';
    return review(
      input,
      'late-payment-not-refundable',
      await reviewLatePayment(input.donationId, reason),
    );
  }
  const confirmed = await confirmDonation(input.donationId, true);
  // Refunds and disputes that came before the credit found nothing to reverse: read them again.
  const { donationId, campaignId, provider, providerReference, verifyWithProvider } = input;
  await followProviderTruth({
    donationId,
    campaignId,
    provider,
    providerReference,
    verifyWithProvider,
  });
  if (decision === 'credit') return { outcome: 'credited', donationStatus: confirmed.status };
  const refund = await requestRefund(input, truth);
  const ended = refund && (await followRefund(input.donationId, refund.refundId));
  // The ledger says whether the money went back: a refund the provider denied or failed (or one
  // that failed after it succeeded) left it credited.
  const reason: LateReviewReason = !refund
    ? 'late-payment-refund-refused'
    : ended === 'posted' || ended === 'no-money-moved'
      ? 'late-payment-refund-failed'
      : 'late-payment-refund-unsettled';
  const held = await holdLateRefund(input.donationId, reason);
  if (held.held) return review(input, reason, held.status);
  // Already held for another reason (counted by whoever held it), or the money left.
  if (held.status === 'NEEDS_REVIEW')
    return { outcome: 'needs-review', donationStatus: 'NEEDS_REVIEW' };
  return { outcome: 'refunded', donationStatus: held.status };
}

/** Asks for the whole amount back (a child request); undefined when it failed for good. */
async function requestRefund(
  input: LatePaymentInput,
  truth: PaymentSnapshot,
): Promise<RefundRequestResult | undefined> {
  try {
    return await executeChild(refundRequestWorkflow, {
      workflowId: refundRequestWorkflowId(input.donationId, 'late-payment'),
      workflowExecutionTimeout: REFUND_REQUEST_TIMEOUT,
      args: [
        {
          donationId: input.donationId,
          campaignId: input.campaignId,
          provider: input.provider,
          providerReference: input.providerReference,
          verifyWithProvider: input.verifyWithProvider,
          amount: truth.amount,
          currency: truth.currency,
          reason: 'late payment to a closed campaign',
          requestKey: 'late-payment',
        },
      ],
    });
  } catch (error) {
    if (error instanceof ChildWorkflowFailure) return undefined;
    throw error;
  }
}

/**
 * Waits for the refund's reversal workflow to end, reading it with backoff: its outcome, or
 * undefined when it outlived the horizon or could not be read.
 */
async function followRefund(
  donationId: string,
  refundId: string,
): Promise<ReversalOutcome | 'closed' | undefined> {
  const started = Date.now();
  let interval = 2_000;
  for (;;) {
    try {
      const outcome = await reversalOutcome(donationId, refundId);
      if (outcome !== undefined) return outcome;
    } catch (error) {
      if (error instanceof ActivityFailure) return undefined;
      throw error;
    }
    if (Date.now() - started > REFUND_FOLLOW_HORIZON_MS) return undefined;
    await sleep(interval);
    interval = Math.min(interval * 2, MAX_CHECK_INTERVAL_MS);
  }
}

function review(
  input: LatePaymentInput,
  reason: LateReviewReason,
  status: DonationStatus,
): LatePaymentResult {
  countNeedsReview(reason);
  log.warn('late payment left to review', { donationId: input.donationId, reason, status });
  return { outcome: 'needs-review', donationStatus: status, reason };
}
