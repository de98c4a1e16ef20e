import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import type { XenditInvoice, XenditRefund } from '../../src/providers/xendit/xendit-protocol';
import type { FakeGateway } from './fake-gateway';
import { basicAuth, listenFake } from './fake-gateway';

export interface FakeXendit extends FakeGateway {
  /** Ends a pending refund, as Xendit does before sending its refund webhook. */
  settleRefund(refundId: string, status: 'SUCCEEDED' | 'FAILED'): void;
  /** The invoice callback Xendit would send now (send it with the account's token). */
  invoiceCallback(invoiceId: string): Buffer;
  /** The refund webhook, in the documented `{event, business_id, created, data}` shape. */
  refundWebhook(refundId: string): Buffer;
  invoice(id: string): XenditInvoice | undefined;
}

const INVOICE_CURRENCIES = new Set(['IDR', 'USD', 'THB', 'VND', 'PHP', 'MYR']);

/**
 * Xendit's Invoice and Refund APIs on loopback, as xendit-node and docs.xendit.co describe them:
 * amounts in major units; no idempotency on invoice creation (a second POST makes a second
 * invoice), found again by `external_id`; refunds read the `idempotency-key` header, answer
 * PENDING and settle later (REFUND_IN_PROGRESS while one is pending); a repeated key answers
 * 409 DUPLICATE_ERROR.
 */
export async function fakeXendit(secretKey: string): Promise<FakeXendit> {
  const app = Fastify();
  const invoices = new Map<string, XenditInvoice>();
  const refundsById = new Map<string, XenditRefund>();
  const refundKeys = new Set<string>();
  const charges = new Map<string, number>();
  const refunds = new Map<string, number>();
  const error = (code: string, message: string) => ({ error_code: code, message });

  app.addHook('onRequest', async (request, reply) => {
    if (request.headers.authorization !== basicAuth(secretKey)) {
      return reply.code(401).send(error('INVALID_API_KEY', 'API key is not authorized'));
    }
  });

  app.post('/v2/invoices', async (request, reply) => {
    const body = request.body as { external_id?: string; amount?: number; currency?: string };
    const currency = body.currency ?? 'IDR';
    if (!body.external_id || typeof body.amount !== 'number' || !INVOICE_CURRENCIES.has(currency)) {
      return reply.code(400).send(error('API_VALIDATION_ERROR', 'invalid invoice'));
    }
    const id = randomUUID().replace(/-/g, '').slice(0, 24);
    const now = new Date().toISOString();
    const invoice: XenditInvoice = {
      id,
      external_id: body.external_id,
      status: 'PENDING',
      amount: body.amount,
      currency,
      invoice_url: `https://checkout-staging.xendit.co/web/${id}`,
      created: now,
      updated: now,
    };
    invoices.set(id, invoice);
    charges.set(body.external_id, (charges.get(body.external_id) ?? 0) + 1);
    return invoice;
  });

  app.get<{ Querystring: { external_id?: string } }>('/v2/invoices', async (request) =>
    [...invoices.values()].filter((i) => i.external_id === request.query.external_id),
  );

  const notFound = error('INVOICE_NOT_FOUND_ERROR', 'Could not find invoice');
  app.get<{ Params: { id: string } }>(
    '/v2/invoices/:id',
    async (request, reply) => invoices.get(request.params.id) ?? reply.code(404).send(notFound),
  );

  app.post<{ Params: { id: string } }>('/invoices/:id/expire!', async (request, reply) => {
    const invoice = invoices.get(request.params.id);
    if (invoice?.status !== 'PENDING') return reply.code(404).send(notFound);
    invoice.status = 'EXPIRED';
    invoice.updated = new Date().toISOString();
    return invoice;
  });

  app.post('/refunds', async (request, reply) => {
    const key = request.headers['idempotency-key'];
    const body = request.body as {
      invoice_id?: string;
      amount?: number;
      currency?: string;
      reference_id?: string;
    };
    const invoice = invoices.get(body.invoice_id ?? '');
    if (typeof key === 'string' && refundKeys.has(key)) {
      return reply
        .code(409)
        .send(error('DUPLICATE_ERROR', 'A refund with this idempotency key exists'));
    }
    if (!invoice) return reply.code(404).send(error('DATA_NOT_FOUND', 'Payment not found'));
    if (invoice.status !== 'PAID' && invoice.status !== 'SETTLED') {
      return reply.code(400).send(error('INELIGIBLE_TRANSACTION_STATUS', 'not paid'));
    }
    const ofInvoice = [...refundsById.values()].filter((r) => r.invoice_id === invoice.id);
    if (ofInvoice.some((r) => r.status === 'PENDING')) {
      return reply.code(400).send(error('REFUND_IN_PROGRESS', 'Wait for the pending refund'));
    }
    const refunded = ofInvoice
      .filter((r) => r.status === 'SUCCEEDED')
      .reduce((s, r) => s + Number(r.amount), 0);
    const amount = body.amount ?? (invoice.paid_amount ?? invoice.amount) - refunded;
    if (amount <= 0 || amount > (invoice.paid_amount ?? invoice.amount) - refunded) {
      return reply.code(400).send(error('REFUND_AMOUNT_EXCEEDED', 'exceeds the unrefunded amount'));
    }
    if (typeof key === 'string') refundKeys.add(key);
    refunds.set(String(key), (refunds.get(String(key)) ?? 0) + 1);
    const now = new Date().toISOString();
    const refund: XenditRefund = {
      id: `rfd-${randomUUID()}`,
      invoice_id: invoice.id,
      payment_request_id: null,
      reference_id: body.reference_id ?? null,
      amount,
      currency: invoice.currency,
      status: 'PENDING',
      failure_code: null,
      created: now,
      updated: now,
    };
    refundsById.set(refund.id, refund);
    return refund;
  });

  app.get<{ Querystring: { invoice_id?: string } }>('/refunds', async (request) => ({
    data: [...refundsById.values()].filter((r) => r.invoice_id === request.query.invoice_id),
    has_more: false,
  }));

  return {
    ...(await listenFake(app)),
    charges,
    refunds,
    set(id, status) {
      const invoice = invoices.get(id);
      if (!invoice) throw new Error(`no Xendit invoice ${id}`);
      invoice.status = status;
      if (status === 'PAID') {
        invoice.paid_amount = invoice.amount;
        invoice.paid_at = new Date().toISOString();
      }
    },
    settleRefund(refundId, status) {
      const refund = refundsById.get(refundId);
      if (!refund) throw new Error(`no Xendit refund ${refundId}`);
      refund.status = status;
      refund.failure_code = status === 'FAILED' ? 'REFUND_FAILED' : null;
      refund.updated = new Date().toISOString();
    },
    invoiceCallback(invoiceId) {
      const invoice = invoices.get(invoiceId);
      if (!invoice) throw new Error(`no Xendit invoice ${invoiceId}`);
      return Buffer.from(
        JSON.stringify({
          ...invoice,
          user_id: '5f27a14a9bf05c73dd040bc8',
          merchant_name: 'galang',
        }),
      );
    },
    refundWebhook(refundId) {
      const refund = refundsById.get(refundId);
      if (!refund) throw new Error(`no Xendit refund ${refundId}`);
      return Buffer.from(
        JSON.stringify({
          event: refund.status === 'FAILED' ? 'refund.failed' : 'refund.succeeded',
          business_id: '5f27a14a9bf05c73dd040bc8',
          created: new Date().toISOString(),
          data: refund,
        }),
      );
    },
    invoice: (id) => invoices.get(id),
  };
}
