import {
  ActivityFailure,
  allHandlersFinished,
  ApplicationFailure,
  condition,
  isCancellation,
  log,
  metricMeter,
} from '@temporalio/workflow';
import type { DonationInput, DonationOutcome } from './contracts';
import { DonationRun } from './donation-run';

/**
 * One donation's life: record it and create its payment, wait for the provider, credit it once,
 * or end it without money only when the provider says the payment can no longer succeed.
 * Refunds and disputes are not its business: each has a reversal workflow of its own.
 * The workflow ID derives from the client's idempotency scope. See docs/donation-lifecycle.md.
 */
export async function donationWorkflow(input: DonationInput): Promise<DonationOutcome> {
  const donation = new DonationRun(input);
  const result = await runDonation(donation);
  metricMeter
    .createCounter('galang_donation_outcomes', undefined, 'Donation workflows by final status')
    .add(1, { status: result.status });
  log.info('donation workflow finished', { ...result });
  // Let a waiting paymentAction update answer before the workflow closes.
  await condition(allHandlersFinished);
  await donation.handOffMissedSuccess(result);
  return result;
}

/**
 * The lifecycle, step by step: start, wait, then settle, or the deadline's own checks. Once the
 * payment exists, a step that failed for good (every activity's failure is bounded) ends the
 * donation in NEEDS_REVIEW, where an operator sees it; a start that fails for good fails the
 * workflow (Failed in the UI, its row handed back or dead-lettered by reconciliation).
 */
async function runDonation(donation: DonationRun): Promise<DonationOutcome> {
  const ended = await donation.start();
  if (ended) return ended;
  try {
    if (await donation.wait()) return await donation.settle();
    return await donation.deadline();
  } catch (error) {
    // An operator's cancellation is theirs to finish, not a failed step.
    if (isCancellation(error)) throw error;
    // A local activity's final failure reaches the workflow as its ApplicationFailure itself.
    if (!(error instanceof ActivityFailure || error instanceof ApplicationFailure)) throw error;
    log.warn('a donation step failed for good', { error: error.message });
    return donation.finish('NEEDS_REVIEW', 'step-failed-for-good');
  }
}
