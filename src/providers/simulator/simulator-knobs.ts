import type { DeliveryKnobs } from './simulator-delivery';

/**
 * Adversarial delivery, for a whole run (constructor) or one payment (`plan`). Rates are
 * probabilities from 0 to 1, drawn independently for each payment or call.
 */
export interface SimulatorKnobs extends Omit<DeliveryKnobs, 'dropWebhooks'> {
  /** Added to every API answer, in milliseconds. */
  latencyMs?: number;
  /** Share of payments refused at creation with 402. */
  declineRate?: number;
  /** Share of API calls answered 503 (the gateway having a bad minute); clients retry. */
  errorRate?: number;
}

export interface SimulatorOptions extends SimulatorKnobs {
  /** Where notifications go; see {@link PaymentSimulator.webhookUrl}. */
  webhookUrl: string;
  webhookSecret: string;
  /** Settle every new payment after this delay; negative leaves payments pending. */
  autoPayMs: number;
  /** Delivery attempts per notification while our endpoint fails (default 16: about five minutes). */
  maxDeliveryAttempts?: number;
}

/** How the simulated gateway treats one payment, planned by a test before it is created. */
export interface PaymentPlan extends SimulatorKnobs, DeliveryKnobs {
  /** Refuse the payment at creation with 402. */
  decline?: boolean;
  /** Settle on its own after this delay; negative leaves it pending. Defaults to the run's. */
  autoPayMs?: number;
  /**
   * Pass through `processing` when auto-pay fires, for this long before settling (negative:
   * stay processing until a test moves it). Unset: settle directly.
   */
  processingMs?: number;
  /** The donor pays this amount instead of the one asked for. */
  payAmount?: number;
  /** How this payment's refunds end: `denied` fails them at creation. Default `succeeded`. */
  refundOutcome?: 'succeeded' | 'failed' | 'denied';
  /** A refund settles this long after it was made (default 0); negative leaves it pending. */
  refundSettleMs?: number;
}
