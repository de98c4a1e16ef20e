import { verifyStandardWebhook } from '../standard-webhooks';
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
import { requestJson } from '../http-json';
import { simulatorStatusMap } from './simulator-protocol';
import type { SimulatorNotification, SimulatorPayment } from './simulator-protocol';

export interface SimulatorProviderOptions {
  baseUrl: string;
  /** Every secret currently accepted; more than one while rotating. */
  webhookSecrets: readonly string[];
  now?: () => number;
}

function header(headers: WebhookHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** galang's client for the local payment simulator. */
export function createSimulatorProvider(options: SimulatorProviderOptions): PaymentProvider {
  const now = options.now ?? Date.now;
  return {
    name: 'simulator',
    verifyBeforeCredit: false,

    async createPayment(request: CreatePaymentRequest): Promise<CreatedPayment> {
      const payment = await requestJson<SimulatorPayment>(`${options.baseUrl}/v1/payments`, {
        method: 'POST',
        headers: { 'idempotency-key': request.idempotencyKey },
        body: {
          reference: request.reference,
          amount: request.amount,
          currency: request.currency,
          method: request.method,
          description: request.description,
        },
      });
      return {
        providerReference: payment.id,
        status: simulatorStatusMap[payment.status],
        action: payment.action,
      };
    },

    async fetchStatus(providerReference: string): Promise<PaymentSnapshot> {
      return snapshot(
        await requestJson<SimulatorPayment>(
          `${options.baseUrl}/v1/payments/${encodeURIComponent(providerReference)}`,
          { method: 'GET' },
        ),
      );
    },

    async cancel(providerReference: string): Promise<PaymentSnapshot> {
      return snapshot(
        await requestJson<SimulatorPayment>(
          `${options.baseUrl}/v1/payments/${encodeURIComponent(providerReference)}/cancel`,
          { method: 'POST' },
        ),
      );
    },

    async refund(request: RefundRequest): Promise<PaymentSnapshot> {
      return snapshot(
        await requestJson<SimulatorPayment>(
          `${options.baseUrl}/v1/payments/${encodeURIComponent(request.providerReference)}/refunds`,
          {
            method: 'POST',
            headers: { 'idempotency-key': request.idempotencyKey },
            body: { amount: request.amount, reason: request.reason },
          },
        ),
      );
    },

    parseWebhook(rawBody: Buffer, headers: WebhookHeaders): WebhookEvent {
      const id = header(headers, 'webhook-id');
      const verdict = verifyStandardWebhook({
        secrets: options.webhookSecrets,
        id,
        timestamp: header(headers, 'webhook-timestamp'),
        signature: header(headers, 'webhook-signature'),
        body: rawBody,
        nowSeconds: Math.floor(now() / 1000),
      });
      if (!verdict.ok || id === undefined)
        throw new WebhookRejected('signature', verdict.ok ? 'no id' : verdict.reason);
      const notification = parseNotification(rawBody);
      const { data } = notification;
      return {
        eventKey: id,
        donationRef: data.reference,
        providerReference: data.id,
        status: simulatorStatusMap[data.status],
        amount: data.amount,
        currency: data.currency,
        occurredAt: data.occurred_at,
        raw: notification,
      };
    },
  };
}

function snapshot(payment: SimulatorPayment): PaymentSnapshot {
  return {
    providerReference: payment.id,
    status: simulatorStatusMap[payment.status],
    amount: payment.paid_amount ?? payment.amount,
    currency: payment.currency,
  };
}

function parseNotification(rawBody: Buffer): SimulatorNotification {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new WebhookRejected('malformed', 'body is not JSON');
  }
  const data = (parsed as { data?: Record<string, unknown> } | null)?.data;
  if (
    !data ||
    typeof data.id !== 'string' ||
    typeof data.reference !== 'string' ||
    typeof data.status !== 'string' ||
    !Object.hasOwn(simulatorStatusMap, data.status) ||
    !Number.isSafeInteger(data.amount) ||
    typeof data.currency !== 'string' ||
    typeof data.occurred_at !== 'string'
  ) {
    throw new WebhookRejected('malformed', 'not a simulator payment notification');
  }
  return parsed as SimulatorNotification;
}
