import { isSupportedCurrency } from '../../money/currency';
import { ProviderRejected, requestJson } from '../http-json';
import { verifyStandardWebhook } from '../standard-webhooks';
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
import type { PaymentSnapshot, RefundRecord } from '../../../workflows/contracts';
import {
  SIMULATOR_METHODS,
  disputeStatusMap,
  paymentStatusMap,
  refundStatusMap,
} from './simulator-protocol';
import type { SimulatorError, SimulatorPayment, SimulatorRefund } from './simulator-protocol';

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
  const url = (path: string) => `${options.baseUrl}${path}`;
  const read = async (id: string) =>
    snapshot(
      await requestJson<SimulatorPayment>(url(`/v1/payments/${encodeURIComponent(id)}`), {
        method: 'GET',
      }),
    );
  return {
    name: 'simulator',
    verifyWithProvider: false,

    supports: (currency, method) =>
      isSupportedCurrency(currency) && Object.hasOwn(SIMULATOR_METHODS, method),
    refundable: (method) => SIMULATOR_METHODS[method]?.refundable === true,
    keepsMethods: (method) => SIMULATOR_METHODS[method]?.keepable === true,

    async createPayment(request: CreatePaymentRequest): Promise<CreatedPayment> {
      const use = request.savedMethod;
      let payment: SimulatorPayment;
      try {
        payment = await requestJson<SimulatorPayment>(url('/v1/payments'), {
          method: 'POST',
          headers: { 'idempotency-key': request.idempotencyKey },
          body: {
            reference: request.donationId,
            amount: request.amount,
            currency: request.currency,
            method: request.method,
            description: request.description,
            ...(use && 'keep' in use && { save_method: true }),
            ...(use && 'charge' in use && { saved_method: use.charge }),
          },
        });
      } catch (error) {
        // A kept method's decline names the declined payment: the donation keeps it.
        const declined = (error as { body?: SimulatorError }).body?.payment;
        if (!(error instanceof ProviderRejected) || error.status !== 402 || !declined) throw error;
        payment = declined;
      }
      return {
        providerReference: payment.id,
        status: paymentStatusMap[payment.status],
        action: payment.action,
      };
    },

    fetchPayment: read,

    async cancel(providerReference: string): Promise<CancelResult> {
      try {
        const payment = await requestJson<SimulatorPayment>(
          url(`/v1/payments/${encodeURIComponent(providerReference)}/cancel`),
          { method: 'POST' },
        );
        return { accepted: true, payment: snapshot(payment) };
      } catch (error) {
        // 409: processing at the bank, or paid; the answer carries the payment as it stands.
        if (!(error instanceof ProviderRejected) || error.status !== 409) throw error;
        const refused = (error.body as SimulatorError | undefined)?.payment;
        return {
          accepted: false,
          payment: refused ? snapshot(refused) : await read(providerReference),
        };
      }
    },

    async releaseMethod(saved: string): Promise<void> {
      try {
        await requestJson(url(`/v1/saved-methods/${encodeURIComponent(saved)}`), {
          method: 'DELETE',
        });
      } catch (error) {
        // Released before (a retry whose first answer was lost): done.
        if (!(error instanceof ProviderRejected) || error.status !== 404) throw error;
      }
    },

    async refund(request: RefundRequest): Promise<RefundRecord> {
      const path = `/v1/payments/${encodeURIComponent(request.providerReference)}/refunds`;
      return refundRecord(
        await requestJson<SimulatorRefund>(url(path), {
          method: 'POST',
          headers: { 'idempotency-key': request.idempotencyKey },
          body: { amount: request.amount, reason: request.reason },
        }),
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
      return normalize(id, rawBody);
    },
  };
}

function refundRecord(refund: SimulatorRefund): RefundRecord {
  return { refundId: refund.id, status: refundStatusMap[refund.status], amount: refund.amount };
}

function snapshot(payment: SimulatorPayment): PaymentSnapshot {
  return {
    providerReference: payment.id,
    status: paymentStatusMap[payment.status],
    amount: payment.paid_amount ?? payment.amount,
    currency: payment.currency,
    refunds: payment.refunds.map(refundRecord),
    disputes: payment.disputes.map((d) => ({
      disputeId: d.id,
      status: disputeStatusMap[d.status],
      amount: d.amount,
    })),
    ...(payment.saved_method !== undefined && { savedMethod: payment.saved_method }),
  };
}

const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : undefined);

/** A signed notification as a normalized event; a type galang has no use for is ignored. */
function normalize(eventKey: string, rawBody: Buffer): WebhookEvent {
  let parsed: { type?: unknown; data?: Record<string, unknown> } | null;
  try {
    parsed = JSON.parse(rawBody.toString('utf8')) as typeof parsed;
  } catch {
    throw new WebhookRejected('malformed', 'body is not JSON');
  }
  const type = parsed?.type;
  const data = parsed?.data ?? {};
  // Every notification names its type; a body without one is not a notification at all.
  if (typeof type !== 'string') throw new WebhookRejected('malformed', 'no event type');
  if (type !== 'payment.updated' && type !== 'refund.updated' && type !== 'dispute.updated') {
    return { kind: 'ignored', eventKey, reason: `event type ${type}` };
  }
  const status = str(data.status) ?? '';
  const id = str(data.id);
  const paymentId = type === 'payment.updated' ? id : str(data.payment_id);
  const base = {
    eventKey,
    donationRef: str(data.reference),
    providerReference: paymentId ?? '',
    amount: typeof data.amount === 'number' ? data.amount : NaN,
    currency: str(data.currency) ?? '',
    occurredAt: str(data.occurred_at) ?? '',
  };
  if (
    !id ||
    !paymentId ||
    !Number.isSafeInteger(base.amount) ||
    !base.currency ||
    !base.occurredAt
  ) {
    throw new WebhookRejected('malformed', `not a simulator ${type} notification`);
  }
  if (type === 'payment.updated' && Object.hasOwn(paymentStatusMap, status)) {
    return {
      ...base,
      kind: 'payment',
      status: paymentStatusMap[status as keyof typeof paymentStatusMap],
    };
  }
  if (type === 'refund.updated' && Object.hasOwn(refundStatusMap, status)) {
    return {
      ...base,
      kind: 'refund',
      refundId: id,
      status: refundStatusMap[status as keyof typeof refundStatusMap],
    };
  }
  if (type === 'dispute.updated' && Object.hasOwn(disputeStatusMap, status)) {
    return {
      ...base,
      kind: 'dispute',
      disputeId: id,
      status: disputeStatusMap[status as keyof typeof disputeStatusMap],
    };
  }
  throw new WebhookRejected('malformed', `unknown ${type} status ${status}`);
}
