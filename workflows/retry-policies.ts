import type { ActivityOptions, LocalActivityOptions } from '@temporalio/workflow';
import { nonRetryableErrorTypes } from './contracts';

/** Every money step: retried with backoff until it succeeds or fails for good. */
export const moneyActivity: ActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: {
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
    nonRetryableErrorTypes,
  },
};

/**
 * Asking a provider for a refund: retried through an outage, but never past half of the shortest
 * provider idempotency window (Stripe forgets a key after 24 hours), where a retry could refund twice.
 */
export const refundRequestActivity: ActivityOptions = {
  ...moneyActivity,
  scheduleToCloseTimeout: '12 hours',
};

/**
 * The same steps run in the worker's process: no activity task round trip, so the payment
 * action and a confirmation each cost one workflow task (docs/benchmarks.md, bench:spike).
 * A backoff past two seconds waits on a workflow timer, not in the worker: Temporal's core
 * holds a stopping worker until its local activities end, so local backoffs through a
 * provider's outage kept a deploy (or Ctrl-C) waiting for as long as the outage lasted.
 */
export const moneyLocalActivity: LocalActivityOptions = {
  startToCloseTimeout: '30 seconds',
  retry: moneyActivity.retry,
  localRetryThreshold: '2 seconds',
};

/** Reconciliation: a failed run is not retried for long; the schedule starts the next one. */
export const reconciliationActivity: ActivityOptions = {
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '2 seconds', maximumInterval: '30 seconds', maximumAttempts: 5 },
};

/** The provider sweep reads one payment at a time: long, but its heartbeat shows it alive. */
export const providerSweepActivity: ActivityOptions = {
  ...reconciliationActivity,
  startToCloseTimeout: '1 hour',
  heartbeatTimeout: '2 minutes',
};

/** Numbering and mail dispatch: short; the schedule's next run takes what a failed one left. */
export const receiptActivity: ActivityOptions = {
  ...reconciliationActivity,
  startToCloseTimeout: '1 minute',
};

/**
 * A mail batch: through an SMTP outage with backoff for about a day, then what is left is
 * recorded as failed (metrics, `npm run ops -- mail`); a permanent refusal (5xx) fails its one
 * document. A heartbeat per document: an attempt that stalls or outlives its time stops at the
 * next document, so a retry never mails beside it.
 */
export const mailActivity: ActivityOptions = {
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '1 minute',
  retry: {
    initialInterval: '10 seconds',
    backoffCoefficient: 2,
    maximumInterval: '1 hour',
    maximumAttempts: 30,
    nonRetryableErrorTypes,
  },
};

/**
 * A pledge period's start: through an outage with backoff for about a day (the catch-up window
 * is three), then the period's workflow fails where operators see it in the schedule's list.
 */
export const pledgeActivity: ActivityOptions = {
  // A start and a few reads: a worker that died holding it is noticed within seconds.
  startToCloseTimeout: '10 seconds',
  retry: {
    initialInterval: '5 seconds',
    backoffCoefficient: 2,
    maximumInterval: '30 minutes',
    maximumAttempts: 60,
    nonRetryableErrorTypes,
  },
};

/**
 * Waiting for a pledge attempt's donation to end: as long as a donation may take (its payment
 * deadline plus the horizon of a payment that would not close, a day by default), with a
 * heartbeat so a worker that died holding the wait is replaced within a minute.
 */
export const pledgeWaitActivity: ActivityOptions = {
  startToCloseTimeout: '3 days',
  heartbeatTimeout: '1 minute',
  retry: {
    initialInterval: '5 seconds',
    backoffCoefficient: 2,
    maximumInterval: '10 minutes',
    maximumAttempts: 20,
    nonRetryableErrorTypes,
  },
};
