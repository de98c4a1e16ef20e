import { timingSafeEqual } from 'node:crypto';
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
import type { PaymentStatus } from '../../../workflows/payment-event';

/** Xendit Invoice API shapes galang uses (developers.xendit.co: Invoices, Refunds). */
export interface XenditInvoice {
  id: string;
  external_id: string;
  status: string;
  amount: number;
  paid_amount?: number;
  currency: string;
  invoice_url?: string;
  paid_at?: string;
  updated?: string;
}

export interface XenditOptions {
  baseUrl: string;
  secretKey: string;
  /** Every callback verification token accepted; more than one while rotating. */
  callbackTokens: readonly string[];
}

const statuses: Record<string, PaymentStatus> = {
  PENDING: 'PENDING',
  PAID: 'PAID',
  SETTLED: 'PAID',
  EXPIRED: 'EXPIRED',
};

/**
 * Xendit invoices. Creation sends our donation id as `external_id` and an `X-IDEMPOTENCY-KEY`.
 * Callbacks are authenticated by a shared token, not a signature over the body, so the
 * donation workflow confirms each with GET before crediting (`verifyBeforeCredit`).
 */
export function createXenditProvider(options: XenditOptions): PaymentProvider {
  const auth = `Basic ${Buffer.from(`${options.secretKey}:`).toString('base64')}`;
  const call = <T>(path: string, method: string, body?: unknown, idempotencyKey?: string) =>
    requestJson<T>(`${options.baseUrl}${path}`, {
      method,
      headers: {
        authorization: auth,
        ...(idempotencyKey ? { 'x-idempotency-key': idempotencyKey } : {}),
      },
      body,
    });
  const snapshot = (invoice: XenditInvoice): PaymentSnapshot => ({
    providerReference: invoice.id,
    status: statuses[invoice.status] ?? 'PENDING',
    amount: invoice.paid_amount ?? invoice.amount,
    currency: invoice.currency,
  });

  return {
    name: 'xendit',
    verifyBeforeCredit: true,

    async createPayment(request: CreatePaymentRequest): Promise<CreatedPayment> {
      const invoice = await call<XenditInvoice>(
        '/v2/invoices',
        'POST',
        {
          external_id: request.reference,
          amount: request.amount,
          currency: request.currency,
          description: request.description,
        },
        request.idempotencyKey,
      );
      return {
        providerReference: invoice.id,
        status: snapshot(invoice).status,
        action: { type: 'redirect', value: invoice.invoice_url ?? '' },
      };
    },

    async fetchStatus(invoiceId: string): Promise<PaymentSnapshot> {
      return snapshot(
        await call<XenditInvoice>(`/v2/invoices/${encodeURIComponent(invoiceId)}`, 'GET'),
      );
    },

    async cancel(invoiceId: string): Promise<PaymentSnapshot> {
      return snapshot(
        await call<XenditInvoice>(`/invoices/${encodeURIComponent(invoiceId)}/expire!`, 'POST'),
      );
    },

    async refund(request: RefundRequest): Promise<PaymentSnapshot> {
      await call<{ id: string; status: string }>(
        '/refunds',
        'POST',
        {
          invoice_id: request.providerReference,
          amount: request.amount,
          reason: 'REQUESTED_BY_CUSTOMER',
        },
        request.idempotencyKey,
      );
      const invoice = snapshot(
        await call<XenditInvoice>(
          `/v2/invoices/${encodeURIComponent(request.providerReference)}`,
          'GET',
        ),
      );
      return {
        ...invoice,
        status: request.amount < invoice.amount ? 'PARTIALLY_REFUNDED' : 'REFUNDED',
      };
    },

    parseWebhook(rawBody: Buffer, headers: WebhookHeaders): WebhookEvent {
      const token = headers['x-callback-token'];
      const offered = Buffer.from(typeof token === 'string' ? token : '', 'utf8');
      const valid = options.callbackTokens.some((expected) => {
        const bytes = Buffer.from(expected, 'utf8');
        return offered.length === bytes.length && timingSafeEqual(offered, bytes);
      });
      if (!valid) throw new WebhookRejected('signature', 'x-callback-token does not match');
      let body: Partial<Record<keyof XenditInvoice, unknown>>;
      try {
        body = JSON.parse(rawBody.toString('utf8')) as typeof body;
      } catch {
        throw new WebhookRejected('malformed', 'body is not JSON');
      }
      const status = typeof body.status === 'string' ? statuses[body.status] : undefined;
      const amount = body.paid_amount ?? body.amount;
      if (
        typeof body.id !== 'string' ||
        typeof body.external_id !== 'string' ||
        !status ||
        typeof amount !== 'number' ||
        !Number.isSafeInteger(amount) ||
        typeof body.currency !== 'string'
      ) {
        throw new WebhookRejected('malformed', 'not an invoice callback');
      }
      return {
        eventKey: `${body.id}:${String(body.status)}`,
        donationRef: body.external_id,
        providerReference: body.id,
        status,
        amount,
        currency: body.currency,
        occurredAt:
          typeof body.paid_at === 'string'
            ? body.paid_at
            : typeof body.updated === 'string'
              ? body.updated
              : new Date().toISOString(),
        raw: body,
      };
    },
  };
}
