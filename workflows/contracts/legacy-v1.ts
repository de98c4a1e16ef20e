/**
 * The payment event as workflows started before money-v2 know it (one status for the payment
 * and its reversals). Only workflows/legacy/ and its activities use it.
 */

/** A provider's lifecycle, normalized. Each adapter maps its own statuses onto these. */
export type PaymentStatusV1 =
  | 'PENDING'
  | 'PAID'
  | 'DECLINED'
  | 'EXPIRED'
  | 'CANCELED'
  | 'REFUNDED'
  | 'PARTIALLY_REFUNDED'
  | 'CHARGED_BACK';

/** What the workflow is told about a payment, by a webhook signal or by asking the provider. */
export interface PaymentEventV1 {
  /** The provider's dedupe key for this notification. */
  eventKey: string;
  status: PaymentStatusV1;
  amount: number;
  currency: string;
  /** ISO 8601, as the provider stated it. */
  occurredAt: string;
}
