import Stripe from 'stripe';
import { isSupportedCurrency } from '../../money/currency';
import { ProviderRejected } from '../http-json';
import { WebhookRejected } from '../payment-provider';
import type {
  CancelResult,
  CreatePaymentRequest,
  CreatedPayment,
  PaymentProvider,
  RefundRequest,
  WebhookEvent,
  WebhookHeaders,
} from '../payment-provider';
import type { DisputeRecord, PaymentSnapshot, RefundRecord } from '../../../workflows/contracts';
import { fromStripeAmount, toStripeAmount } from './stripe-amounts';
import { mapStripeError, stripeCall } from './stripe-errors';
import { disputeStatus, intentStatus, normalizeStripeEvent, refundStatus } from './stripe-mapping';

/**
 * The API version galang is written against, pinned so an account's default version cannot
 * change the shapes it reads (it is the version this stripe-node release is generated for).
 */
export const STRIPE_API_VERSION = '2026-10-28.endive';

/** Stripe's default tolerance for a webhook's timestamp, in seconds. */
export const STRIPE_TOLERANCE_SECONDS = 300;

export interface StripeOptions {
  /** https://api.stripe.com, or a loopback fake in tests. */
  baseUrl: string;
  secretKey: string;
  /** Every endpoint secret accepted; more than one while a secret is rolled. */
  webhookSecrets: readonly string[];
  now?: () => number;
}

/** The methods galang asks Stripe for; each becomes the intent's `allowed_payment_method_types`. */
const METHODS = new Set(['card']);

function header(headers: WebhookHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A stripe-node client for `baseUrl`, retrying nothing itself: Temporal owns the retries. */
export function createStripeClient(options: Pick<StripeOptions, 'baseUrl' | 'secretKey'>) {
  const url = new URL(options.baseUrl);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return new Stripe(options.secretKey, {
    apiVersion: STRIPE_API_VERSION,
    maxNetworkRetries: 0,
    timeout: 10_000,
    host: url.hostname,
    port: url.port || (protocol === 'http' ? 80 : 443),
    protocol,
    telemetry: false,
  });
}

/**
 * Stripe PaymentIntents through the official client. Every POST carries an idempotency key
 * derived from the donation (Stripe keeps keys at least 24 hours). Events are signed over the
 * raw body with a timestamp, so they are acted on without a status read.
 */
export function createStripeProvider(options: StripeOptions): PaymentProvider {
  const now = options.now ?? Date.now;
  const stripe = createStripeClient(options);

  const snapshot = async (intent: Stripe.PaymentIntent): Promise<PaymentSnapshot> => {
    const [refunds, disputes] = await Promise.all([
      stripeCall(() =>
        stripe.refunds
          .list({ payment_intent: intent.id, limit: 100 })
          .autoPagingToArray({ limit: 10_000 }),
      ),
      stripeCall(() =>
        stripe.disputes
          .list({ payment_intent: intent.id, limit: 100 })
          .autoPagingToArray({ limit: 10_000 }),
      ),
    ]);
    const paid = intent.status === 'succeeded' && intent.amount_received > 0;
    return {
      providerReference: intent.id,
      status: intentStatus(intent.status),
      amount: fromStripeAmount(paid ? intent.amount_received : intent.amount, intent.currency),
      currency: intent.currency.toUpperCase(),
      ...(paid && { savedMethod: savedMethodOf(intent) }),
      refunds: refunds.map(refundRecord),
      disputes: disputes.flatMap((d): DisputeRecord[] => {
        const status = disputeStatus(d.status);
        return status
          ? [{ disputeId: d.id, status, amount: fromStripeAmount(d.amount, d.currency) }]
          : [];
      }),
    };
  };
  const retrieve = (id: string) => stripeCall(() => stripe.paymentIntents.retrieve(id));

  /**
   * Charges a kept card without the donor (`off_session`, confirmed at once). Stripe answers a
   * failed attempt with a 402 that carries the PaymentIntent: `authentication_required` needs
   * the donor back on the intent's client secret; any other decline ends the donation.
   */
  const chargeSaved = async (
    params: Stripe.PaymentIntentCreateParams,
    saved: string,
    options: Stripe.RequestOptions,
  ): Promise<CreatedPayment> => {
    const [customer, paymentMethod] = saved.split('/');
    try {
      const intent = await stripe.paymentIntents.create(
        { ...params, customer, payment_method: paymentMethod, off_session: true, confirm: true },
        options,
      );
      return created(intent);
    } catch (error) {
      if (!(error instanceof Stripe.errors.StripeCardError) || !error.payment_intent) {
        throw mapStripeError(error);
      }
      const needsDonor =
        error.code === 'authentication_required' ||
        error.decline_code === 'authentication_required';
      return { ...created(error.payment_intent), status: needsDonor ? 'PENDING' : 'DECLINED' };
    }
  };

  return {
    name: 'stripe',
    verifyWithProvider: false,

    supports: (currency, method) => isSupportedCurrency(currency) && METHODS.has(method),
    refundable: (method) => METHODS.has(method),
    keepsMethods: (method) => METHODS.has(method),

    /**
     * Deletes the pledge's own Customer, which "removes all credit card details" and any further
     * use (docs.stripe.com/api/customers/delete); a Customer deleted already answers 404
     * `resource_missing`, the release a retry finds done.
     */
    async releaseMethod(saved: string): Promise<void> {
      const [customer = ''] = saved.split('/');
      try {
        await stripe.customers.del(customer);
      } catch (error) {
        if (error instanceof Stripe.errors.StripeError && error.code === 'resource_missing') return;
        throw mapStripeError(error);
      }
    },

    async createPayment(request: CreatePaymentRequest): Promise<CreatedPayment> {
      if (!METHODS.has(request.method)) throw new ProviderRejected(422, 'payment method');
      const use = request.savedMethod;
      const params: Stripe.PaymentIntentCreateParams = {
        amount: toStripeAmount(request.amount, request.currency),
        currency: request.currency.toLowerCase(),
        description: request.description,
        metadata: { donation_id: request.donationId },
        allowed_payment_method_types: [request.method],
      };
      const options = { idempotencyKey: request.idempotencyKey };
      if (use && 'charge' in use) return chargeSaved(params, use.charge, options);
      if (use && 'keep' in use) {
        // A method is kept on a Customer: one per pledge's first donation, holding no donor data.
        const customer = await stripeCall(() =>
          stripe.customers.create(
            { metadata: { donation_id: request.donationId } },
            { idempotencyKey: `${request.idempotencyKey}:customer` },
          ),
        );
        params.customer = customer.id;
        params.setup_future_usage = 'off_session';
      }
      return created(await stripeCall(() => stripe.paymentIntents.create(params, options)));
    },

    async fetchPayment(id: string): Promise<PaymentSnapshot> {
      return snapshot(await retrieve(id));
    },

    async cancel(id: string): Promise<CancelResult> {
      try {
        const canceled = await stripeCall(() => stripe.paymentIntents.cancel(id));
        return { accepted: true, payment: await snapshot(canceled) };
      } catch (error) {
        // A `processing` or `succeeded` intent cannot be canceled (payment_intent_unexpected_state).
        if (!(error instanceof ProviderRejected) || error.status !== 400) throw error;
        const intent = await retrieve(id);
        return { accepted: intent.status === 'canceled', payment: await snapshot(intent) };
      }
    },

    async refund(request: RefundRequest): Promise<RefundRecord> {
      const refund = await stripeCall(() =>
        stripe.refunds.create(
          {
            payment_intent: request.providerReference,
            amount: toStripeAmount(request.amount, request.currency),
            reason: 'requested_by_customer',
          },
          { idempotencyKey: request.idempotencyKey },
        ),
      );
      return refundRecord(refund);
    },

    parseWebhook(rawBody: Buffer, headers: WebhookHeaders): WebhookEvent {
      const signature = header(headers, 'stripe-signature');
      if (!signature) throw new WebhookRejected('signature', 'missing Stripe-Signature');
      // stripe-node takes the receive time in milliseconds.
      const receivedAt = now();
      let event: Stripe.Event | undefined;
      let reason = 'no endpoint secret matches';
      for (const secret of options.webhookSecrets) {
        try {
          event = stripe.webhooks.constructEvent(
            rawBody,
            signature,
            secret,
            STRIPE_TOLERANCE_SECONDS,
            undefined,
            receivedAt,
          );
          break;
        } catch (error) {
          if (!(error instanceof Stripe.errors.StripeSignatureVerificationError)) {
            throw new WebhookRejected('malformed', 'body is not a Stripe event');
          }
          reason = error.message;
        }
      }
      if (!event) throw new WebhookRejected('signature', reason);
      return normalizeStripeEvent(event);
    },
  };
}

function created(intent: Stripe.PaymentIntent): CreatedPayment {
  return {
    providerReference: intent.id,
    status: intentStatus(intent.status),
    action: { type: 'redirect', value: intent.client_secret ?? '' },
  };
}

/**
 * The kept card of an intent made to keep it, as `<customer>/<payment method>`: an off-session
 * charge needs both (a method attached to a Customer is charged only with that Customer).
 */
function savedMethodOf(intent: Stripe.PaymentIntent): string | undefined {
  const customer = typeof intent.customer === 'string' ? intent.customer : intent.customer?.id;
  const method =
    typeof intent.payment_method === 'string' ? intent.payment_method : intent.payment_method?.id;
  return intent.setup_future_usage === 'off_session' && customer && method
    ? `${customer}/${method}`
    : undefined;
}

function refundRecord(refund: Stripe.Refund): RefundRecord {
  return {
    refundId: refund.id,
    status: refundStatus(refund.status),
    amount: fromStripeAmount(refund.amount, refund.currency),
  };
}
