import { metricMeter } from '@temporalio/workflow';

/** Counts a donation left to an operator, by why; the alert on it is in docs/observability.md. */
export function countNeedsReview(reason: string): void {
  metricMeter
    .createCounter('galang_donations_needs_review', undefined, 'Donations left to operators')
    .add(1, { reason });
}
