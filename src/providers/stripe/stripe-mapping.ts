import type Stripe from 'stripe';
import type { WebhookEvent } from '../payment-provider';
import type {
  DisputeStatus,
  PaymentStatus,
  RefundStatus,
} from '../../../workflows/contracts/provider-events';
import { fromStripeAmount } from './stripe-amounts';

/**
 * A PaymentIntent's status, normalized. `requires_payment_method` is also where a failed
 * attempt lands (the donor may retry), so only `succeeded` and `canceled` are decided.
 */
export function intentStatus(status: Stripe.PaymentIntent.Status): PaymentStatus {
  if (status === 'succeeded') return 'PAID';
  if (status === 'canceled') return 'CANCELED';
  return 'PENDING';
}

/** Refund statuses: pending, requires_action, succeeded, failed, canceled. */
export function refundStatus(status: string | null): RefundStatus {
  if (status === 'succeeded') return 'SUCCEEDED';
  if (status === 'failed' || status === 'canceled') return 'FAILED';
  return 'PENDING';
}

/**
 * Dispute statuses. `warning_*` is an inquiry, `prevented` never became a chargeback: no money
 * moved, so neither is a dispute for galang (undefined). The rest hold the funds until decided.
 */
export function disputeStatus(status: Stripe.Dispute.Status): DisputeStatus | undefined {
  if (status === 'won') return 'WON';
  if (status === 'lost') return 'LOST';
  if (status.startsWith('warning_') || status === 'prevented') return undefined;
  return 'OPEN';
}

const idOf = (ref: string | { id: string } | null): string | undefined =>
  typeof ref === 'string' ? ref : ref?.id;

/** A verified event galang cannot express (another currency, a fraction of its unit). */
class Unconvertible extends Error {}

function amount(value: number, currency: string): number {
  try {
    return fromStripeAmount(value, currency);
  } catch (error) {
    throw new Unconvertible((error as Error).message);
  }
}

/**
 * One verified Stripe event, normalized. One galang cannot convert is recorded for review and
 * answered 2xx: a 4xx would have Stripe retry it for three days and may disable the endpoint.
 */
export function normalizeStripeEvent(event: Stripe.Event): WebhookEvent {
  try {
    return normalize(event);
  } catch (error) {
    if (!(error instanceof Unconvertible)) throw error;
    const reason = `needs-review: ${event.type} ${error.message}`;
    return { kind: 'ignored', eventKey: event.id, reason, needsReview: true };
  }
}

/**
 * `payment_intent.payment_failed` is not final (the
 * intent returns to `requires_payment_method`). `charge.refunded` carries only the cumulative
 * `amount_refunded` (its refunds list is not included since API 2022-11-15), so it is a hint to
 * read the intent's refunds: endpoints older than 2024-10-28.acacia get no `refund.created`.
 */
function normalize(event: Stripe.Event): WebhookEvent {
  const base = { eventKey: event.id, occurredAt: new Date(event.created * 1000).toISOString() };
  const ignored = (reason: string): WebhookEvent => ({
    kind: 'ignored',
    eventKey: event.id,
    reason,
  });
  switch (event.type) {
    case 'payment_intent.succeeded':
    case 'payment_intent.payment_failed':
    case 'payment_intent.canceled':
    case 'payment_intent.processing': {
      const intent = event.data.object;
      const status: PaymentStatus =
        event.type === 'payment_intent.succeeded'
          ? 'PAID'
          : event.type === 'payment_intent.canceled'
            ? 'CANCELED'
            : 'PENDING';
      const paid = status === 'PAID' && intent.amount_received > 0;
      return {
        ...base,
        kind: 'payment',
        status,
        providerReference: intent.id,
        donationRef: intent.metadata.donation_id,
        amount: amount(paid ? intent.amount_received : intent.amount, intent.currency),
        currency: intent.currency.toUpperCase(),
      };
    }
    case 'refund.created':
    case 'refund.updated':
    case 'refund.failed':
    case 'charge.refund.updated': {
      const refund = event.data.object;
      const intentId = idOf(refund.payment_intent);
      if (!intentId) return ignored('refund of a charge without a PaymentIntent');
      return {
        ...base,
        kind: 'refund',
        refundId: refund.id,
        status: event.type === 'refund.failed' ? 'FAILED' : refundStatus(refund.status),
        providerReference: intentId,
        donationRef: refund.metadata?.donation_id,
        amount: amount(refund.amount, refund.currency),
        currency: refund.currency.toUpperCase(),
      };
    }
    case 'charge.refunded': {
      // Older endpoints send only this for a Dashboard refund, naming no refund (S3).
      const intentId = idOf(event.data.object.payment_intent);
      if (!intentId) return ignored('refund of a charge without a PaymentIntent');
      return {
        kind: 'hint',
        eventKey: event.id,
        providerReference: intentId,
        // A charge need not carry the intent's metadata: it binds by the intent alone.
        donationRef: undefined,
        reason: event.type,
      };
    }
    case 'charge.dispute.created':
    case 'charge.dispute.funds_withdrawn':
    case 'charge.dispute.funds_reinstated':
    case 'charge.dispute.closed': {
      const dispute = event.data.object;
      const intentId = idOf(dispute.payment_intent);
      const decided = disputeStatus(dispute.status);
      if (!intentId) return ignored('dispute of a charge without a PaymentIntent');
      if (!decided) return ignored(`dispute ${dispute.status}: an inquiry, no funds moved`);
      const status: DisputeStatus =
        event.type === 'charge.dispute.funds_reinstated'
          ? 'WON'
          : event.type === 'charge.dispute.closed'
            ? decided
            : 'OPEN';
      if (event.type === 'charge.dispute.closed' && status === 'OPEN') {
        return ignored(`dispute closed as ${dispute.status}`);
      }
      return {
        ...base,
        kind: 'dispute',
        disputeId: dispute.id,
        status,
        providerReference: intentId,
        donationRef: undefined,
        amount: amount(dispute.amount, dispute.currency),
        currency: dispute.currency.toUpperCase(),
      };
    }
    default:
      return ignored(`event type ${event.type}`);
  }
}
