import { requestJson } from '../http-json';
import { WebhookRejected } from '../payment-provider';
import type {
  CreatePaymentRequest,
  CreatedPayment,
  PaymentProvider,
  PaymentSnapshot,
  RefundRequest,
  WebhookEvent,
  WebhookHeaders,
} from '../payment-provider';
import { currencyExponents, isSupportedCurrency } from '../../money/currency';
import type { PaymentStatus } from '../../../workflows/payment-event';
import { verifyStripe } from './stripe-signature';

/** Stripe objects galang reads (stripe.com/docs/api: PaymentIntents, Refunds, Events). */
export interface StripePaymentIntent {
  id: string;
  object: 'payment_intent';
  amount: number;
  amount_received?: number;
  currency: string;
  status: string;
  client_secret?: string;
  metadata?: Record<string, string>;
}

interface StripeEvent {
  id: string;
  type: string;
  created: number;
  data: { object: Record<string, unknown> };
}

export interface StripeOptions {
  baseUrl: string;
  secretKey: string;
  webhookSecrets: readonly string[];
  now?: () => number;
}

/** Stripe's zero-decimal currencies; every other one (IDR included) counts in hundredths. */
const ZERO_DECIMAL = new Set([
  'BIF',
  'CLP',
  'DJF',
  'GNF',
  'JPY',
  'KMF',
  'KRW',
  'MGA',
  'PYG',
  'RWF',
  'UGX',
  'VND',
  'VUV',
  'XAF',
  'XOF',
  'XPF',
]);

/** Our minor units (ISO 4217) → Stripe's: IDR 50000 (exponent 0) is Stripe's 5000000. */
export function toStripeAmount(amount: number, currency: string): number {
  const iso = isSupportedCurrency(currency) ? currencyExponents[currency] : 2;
  const stripe = ZERO_DECIMAL.has(currency) ? 0 : 2;
  return amount * 10 ** (stripe - iso);
}

export function fromStripeAmount(amount: number, currency: string): number {
  const iso = isSupportedCurrency(currency) ? currencyExponents[currency] : 2;
  const stripe = ZERO_DECIMAL.has(currency) ? 0 : 2;
  return amount / 10 ** (stripe - iso);
}

const intentStatuses: Record<string, PaymentStatus> = {
  requires_payment_method: 'PENDING',
  requires_confirmation: 'PENDING',
  requires_action: 'PENDING',
  processing: 'PENDING',
  requires_capture: 'PENDING',
  succeeded: 'PAID',
  canceled: 'CANCELED',
};

/**
 * Stripe PaymentIntents. Every POST carries an `Idempotency-Key` derived from the donation, so
 * a retried call returns the first result. Webhooks are signed with a timestamp, so they are
 * trusted without a status read.
 */
export function createStripeProvider(options: StripeOptions): PaymentProvider {
  const now = options.now ?? Date.now;
  const call = <T>(path: string, method: string, form?: Record<string, string>, key?: string) =>
    requestJson<T>(`${options.baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${options.secretKey}`,
        ...(key ? { 'idempotency-key': key } : {}),
        ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      rawBody: form ? new URLSearchParams(form).toString() : undefined,
    });
  const snapshot = (intent: StripePaymentIntent): PaymentSnapshot => {
    const currency = intent.currency.toUpperCase();
    return {
      providerReference: intent.id,
      status: intentStatuses[intent.status] ?? 'PENDING',
      amount: fromStripeAmount(intent.amount_received || intent.amount, currency),
      currency,
    };
  };
  const intent = (id: string) =>
    call<StripePaymentIntent>(`/v1/payment_intents/${encodeURIComponent(id)}`, 'GET');

  return {
    name: 'stripe',
    verifyBeforeCredit: false,

    async createPayment(request: CreatePaymentRequest): Promise<CreatedPayment> {
      const created = await call<StripePaymentIntent>(
        '/v1/payment_intents',
        'POST',
        {
          amount: String(toStripeAmount(request.amount, request.currency)),
          currency: request.currency.toLowerCase(),
          description: request.description,
          'metadata[donation_id]': request.reference,
          'automatic_payment_methods[enabled]': 'true',
        },
        request.idempotencyKey,
      );
      return {
        providerReference: created.id,
        status: snapshot(created).status,
        action: { type: 'redirect', value: created.client_secret ?? '' },
      };
    },

    async fetchStatus(id: string): Promise<PaymentSnapshot> {
      return snapshot(await intent(id));
    },

    async cancel(id: string): Promise<PaymentSnapshot> {
      return snapshot(
        await call<StripePaymentIntent>(
          `/v1/payment_intents/${encodeURIComponent(id)}/cancel`,
          'POST',
          {},
        ),
      );
    },

    async refund(request: RefundRequest): Promise<PaymentSnapshot> {
      const current = await intent(request.providerReference);
      const currency = current.currency.toUpperCase();
      await call(
        '/v1/refunds',
        'POST',
        {
          payment_intent: request.providerReference,
          amount: String(toStripeAmount(request.amount, currency)),
          reason: 'requested_by_customer',
        },
        request.idempotencyKey,
      );
      const paid = snapshot(current);
      return { ...paid, status: request.amount < paid.amount ? 'PARTIALLY_REFUNDED' : 'REFUNDED' };
    },

    parseWebhook(rawBody: Buffer, headers: WebhookHeaders): WebhookEvent {
      const header = headers['stripe-signature'];
      const verdict = verifyStripe({
        secrets: options.webhookSecrets,
        header: typeof header === 'string' ? header : undefined,
        body: rawBody,
        nowSeconds: Math.floor(now() / 1000),
      });
      if (!verdict.ok) throw new WebhookRejected('signature', verdict.reason);
      let event: Partial<StripeEvent>;
      try {
        event = JSON.parse(rawBody.toString('utf8')) as Partial<StripeEvent>;
      } catch {
        throw new WebhookRejected('malformed', 'body is not JSON');
      }
      return normalize(event);
    },
  };
}

function normalize(event: Partial<StripeEvent>): WebhookEvent {
  const object: Record<string, unknown> = event.data?.object ?? {};
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const num = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined);
  const currency = str(object.currency)?.toUpperCase();
  let status: PaymentStatus | undefined;
  let reference: string | undefined;
  let amount: number | undefined;
  switch (event.type) {
    case 'payment_intent.succeeded':
    case 'payment_intent.canceled':
    case 'payment_intent.processing':
    case 'payment_intent.payment_failed':
      status = intentStatuses[str(object.status) ?? ''];
      reference = str(object.id);
      amount = num(object.amount_received) || num(object.amount);
      break;
    case 'charge.refunded':
      status =
        num(object.amount_refunded) === num(object.amount) ? 'REFUNDED' : 'PARTIALLY_REFUNDED';
      reference = str(object.payment_intent);
      amount = num(object.amount);
      break;
    case 'charge.dispute.created':
      status = 'CHARGED_BACK';
      reference = str(object.payment_intent);
      amount = num(object.amount);
      break;
    default:
      break;
  }
  if (typeof event.id !== 'string' || !status || !reference || amount === undefined || !currency) {
    throw new WebhookRejected(
      'malformed',
      `not a payment event galang handles (${String(event.type)})`,
    );
  }
  const metadata = object.metadata as Record<string, unknown> | undefined;
  return {
    eventKey: event.id,
    donationRef: str(metadata?.donation_id) ?? '',
    providerReference: reference,
    status,
    amount: fromStripeAmount(amount, currency),
    currency,
    occurredAt: new Date((num(event.created) ?? 0) * 1000).toISOString(),
    raw: event,
  };
}
