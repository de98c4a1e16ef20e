import { ProviderRejected, requestJson } from '../http-json';
import { ProviderUnavailable } from '../payment-provider';
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
import { parseXenditCallback } from './xendit-callbacks';
import { convergeInvoice } from './xendit-invoices';
import type { InvoiceCalls } from './xendit-invoices';
import {
  XENDIT_CURRENCIES,
  fromXenditAmount,
  invoiceStatuses,
  refundRecord,
  toXenditAmount,
} from './xendit-protocol';
import type { XenditInvoice, XenditRefund } from './xendit-protocol';

export interface XenditOptions {
  baseUrl: string;
  secretKey: string;
  /** Every callback verification token accepted; more than one while rotating. */
  callbackTokens: readonly string[];
}

/**
 * The invoice's `payment_methods` for each galang method. Xendit's refund API covers card,
 * e-wallet and direct-debit payments (its payment_method_type), not transfers or QRIS.
 */
const METHODS: Record<string, { channels: string[]; refundable: boolean }> = {
  qris: { channels: ['QRIS'], refundable: false },
  bank_transfer: { channels: ['BCA', 'BNI', 'BRI', 'MANDIRI', 'PERMATA'], refundable: false },
  ewallet: { channels: ['OVO', 'DANA', 'SHOPEEPAY', 'LINKAJA'], refundable: true },
  card: { channels: ['CREDIT_CARD'], refundable: true },
};

/** Refund answers that clear by themselves: another refund pending, a channel's bad minute. */
const TRANSIENT_CODES = new Set(['REFUND_IN_PROGRESS', 'TEMPORARILY_UNAVAILABLE']);

const errorCode = (error: unknown) =>
  error instanceof ProviderRejected
    ? (error.body as { error_code?: string } | undefined)?.error_code
    : undefined;

/**
 * Xendit invoices. Invoice creation has no documented idempotency, so an invoice is looked up
 * by our donation id (`external_id`) before one is created, and duplicates that overlapping
 * attempts made are expired after (`convergeInvoice`). Refunds answer PENDING and settle
 * by webhook. Callbacks carry a static token, not a signature, so the workflow confirms each
 * one with the API first (`verifyWithProvider`).
 */
export function createXenditProvider(options: XenditOptions): PaymentProvider {
  const auth = `Basic ${Buffer.from(`${options.secretKey}:`).toString('base64')}`;
  const call = async <T>(
    path: string,
    method: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<T> => {
    try {
      return await requestJson<T>(`${options.baseUrl}${path}`, {
        method,
        headers: { authorization: auth, ...headers },
        body,
      });
    } catch (error) {
      const code = errorCode(error);
      if (code && TRANSIENT_CODES.has(code)) {
        throw new ProviderUnavailable(`Xendit ${path}: ${code}`, { cause: error });
      }
      throw error;
    }
  };
  const invoice = (id: string) =>
    call<XenditInvoice>(`/v2/invoices/${encodeURIComponent(id)}`, 'GET');
  const invoiceCalls: InvoiceCalls = {
    list: (externalId) =>
      call<XenditInvoice[]>(
        `/v2/invoices?${new URLSearchParams({ external_id: externalId }).toString()}`,
        'GET',
      ),
    read: invoice,
    expire: (id) => call<XenditInvoice>(`/invoices/${encodeURIComponent(id)}/expire!`, 'POST'),
  };
  const refundsOf = async (invoiceId: string): Promise<XenditRefund[]> => {
    const all: XenditRefund[] = [];
    for (let after: string | undefined; ;) {
      const query = new URLSearchParams({ invoice_id: invoiceId, limit: '100' });
      if (after) query.set('after_id', after);
      const page = await call<{ data: XenditRefund[]; has_more?: boolean }>(
        `/refunds?${query.toString()}`,
        'GET',
      );
      all.push(...page.data);
      after = page.data.at(-1)?.id;
      if (!page.has_more || !after) return all;
    }
  };
  const snapshot = async (found: XenditInvoice): Promise<PaymentSnapshot> => {
    const amount = fromXenditAmount(found.paid_amount ?? found.amount, found.currency);
    if (amount === undefined) throw new RangeError(`Xendit amount ${String(found.amount)}`);
    return {
      providerReference: found.id,
      status: invoiceStatuses[found.status] ?? 'PENDING',
      amount,
      currency: found.currency,
      refunds: (await refundsOf(found.id)).map(refundRecord),
      // Xendit lists disputes by Payments API payment_id, which its docs tie to no invoice;
      // they come as `needs-review:` callbacks instead (docs/provider-contracts.md X6).
      disputes: [],
    };
  };

  return {
    name: 'xendit',
    verifyWithProvider: true,

    supports: (currency, method) =>
      XENDIT_CURRENCIES.has(currency) && Object.hasOwn(METHODS, method),
    refundable: (method) => METHODS[method]?.refundable ?? false,
    // An invoice is a one-time payment: no method it takes can be charged again without the
    // donor (saved tokens are the Payment Requests API's, docs/pledges.md).
    keepsMethods: () => false,

    async createPayment(request: CreatePaymentRequest): Promise<CreatedPayment> {
      const method = Object.hasOwn(METHODS, request.method) ? METHODS[request.method] : undefined;
      if (!method || !XENDIT_CURRENCIES.has(request.currency)) {
        throw new ProviderRejected(422, { message: 'currency or method Xendit does not take' });
      }
      const kept = await convergeInvoice(invoiceCalls, request.donationId, () =>
        call<XenditInvoice>('/v2/invoices', 'POST', {
          external_id: request.donationId,
          amount: toXenditAmount(request.amount, request.currency),
          currency: request.currency,
          description: request.description,
          payment_methods: method.channels,
        }),
      );
      return {
        providerReference: kept.id,
        status: invoiceStatuses[kept.status] ?? 'PENDING',
        action: { type: 'redirect', value: kept.invoice_url ?? '' },
      };
    },

    async fetchPayment(id: string): Promise<PaymentSnapshot> {
      return snapshot(await invoice(id));
    },

    async cancel(id: string): Promise<CancelResult> {
      try {
        return { accepted: true, payment: await snapshot(await invoiceCalls.expire(id)) };
      } catch (error) {
        // Refused for an invoice that is no longer pending: read what it is.
        if (!(error instanceof ProviderRejected) || error.status === 401) throw error;
        const payment = await snapshot(await invoice(id));
        if (payment.status === 'PENDING') throw error;
        return { accepted: payment.status === 'EXPIRED', payment };
      }
    },

    async refund(request: RefundRequest): Promise<RefundRecord> {
      try {
        return refundRecord(
          await call<XenditRefund>(
            '/refunds',
            'POST',
            {
              invoice_id: request.providerReference,
              reference_id: request.idempotencyKey,
              amount: toXenditAmount(request.amount, request.currency),
              currency: request.currency,
              reason: 'REQUESTED_BY_CUSTOMER',
            },
            // The header xendit-node's Refund API sends (not x-idempotency-key).
            { 'idempotency-key': request.idempotencyKey },
          ),
        );
      } catch (error) {
        // 409 DUPLICATE_ERROR / IDEMPOTENCY_ERROR: this key made a refund; answer that one.
        if (!(error instanceof ProviderRejected) || error.status !== 409) throw error;
        const made = (await refundsOf(request.providerReference)).find(
          (r) => r.reference_id === request.idempotencyKey,
        );
        if (!made) throw error;
        return refundRecord(made);
      }
    },

    parseWebhook(rawBody: Buffer, headers: WebhookHeaders): WebhookEvent {
      return parseXenditCallback(rawBody, headers, options.callbackTokens);
    },
  };
}
