import type { Info } from '@temporalio/activity';
import type { MetricMeter, MetricTags } from '@temporalio/common';

/**
 * galang's own activity-side metrics on the worker's Prometheus endpoint, beside the Temporal
 * SDK's. `Context.current().metricMeter` wraps the same Runtime meter but builds a new native
 * instrument on every `createCounter` call (a bridge call per activity run); these are built
 * once per worker instead, and recorded with the tags the SDK gives activity metrics
 * (`namespace`, `taskQueue`, `activityType`).
 */
export function createWorkerMetrics(meter: MetricMeter) {
  return {
    activityRetries: meter.createCounter(
      'galang_activity_retries',
      undefined,
      'Activity attempts after the first',
    ),
    confirmationSeconds: meter.createHistogram(
      'galang_donation_confirmation_seconds',
      'float',
      's',
      'Donation created to payment confirmed',
    ),
    receiptMails: meter.createCounter(
      'galang_receipt_mails',
      undefined,
      'Receipt and credit-note e-mails by outcome (sent, sent-before, no-address, failed)',
    ),
  };
}

export type WorkerMetrics = ReturnType<typeof createWorkerMetrics>;

/** An activity's tags, as the SDK tags its own activity metrics. */
export function activityTags(info: Info): MetricTags {
  return {
    namespace: info.namespace,
    taskQueue: info.taskQueue,
    activityType: info.activityType,
  };
}
