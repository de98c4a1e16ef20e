import { randomBytes, randomUUID } from 'node:crypto';
import { Faults, basicUser, startLoopback } from './loopback';
import type { Route, StandinRequest, StandinResponse } from './loopback';
import { Notifier } from './notifier';

/**
 * Xendit Invoices and Refunds as documented (naelrudd/xendit-docs-llm-agents and xendit-node
 * v7): amounts in major units as JSON numbers; invoices keyed by Xendit's id, listed by
 * `external_id` as an array (no idempotency on creation, so two calls make two invoices);
 * refunds answer PENDING and settle by a `refund.succeeded`/`refund.failed` webhook
 * (apidocs/refund-webhook-notification.md), idempotent on the `idempotency-key` header that
 * xendit-node's Refund API sends (refund/apis/Refund.ts); callbacks carry the account's
 * static `x-callback-token`, no signature.
 */
export interface XenditStandinOptions {
  secretKey: string;
  callbackToken: string;
  invoiceCallbackUrl: string;
  refundCallbackUrl: string;
  timeScale?: number;
  /** Retry schedule of callbacks. Not found in the docs mirror: exponential, injectable. */
  retryDelayMs?: (attempt: number, status: number | undefined) => number | undefined;
}

interface Invoice {
  id: string;
  external_id: string;
  user_id: string;
  status: 'PENDING' | 'PAID' | 'SETTLED' | 'EXPIRED';
  merchant_name: string;
  amount: number;
  paid_amount?: number;
  currency: string;
  description: string;
  invoice_url: string;
  payment_methods: string[];
  payment_method?: string;
  payment_channel?: string;
  paid_at?: string;
  expiry_date: string;
  created: string;
  updated: string;
}

interface Refund {
  id: string;
  invoice_id: string;
  payment_request_id: null;
  payment_id: null;
  amount: number;
  currency: string;
  status: 'PENDING' | 'SUCCEEDED' | 'FAILED';
  reason: string;
  reference_id: string;
  failure_code: string | null;
  payment_method_type: 'CARD' | 'EWALLET' | 'DIRECT_DEBIT';
  channel_code: string;
  metadata: null;
  created: string;
  updated: string;
}

const iso = () => new Date().toISOString();
const REFUNDABLE: Record<string, Refund['payment_method_type']> = {
  CREDIT_CARD: 'CARD',
  OVO: 'EWALLET',
  DANA: 'EWALLET',
  SHOPEEPAY: 'EWALLET',
  LINKAJA: 'EWALLET',
};
export const xenditRetryDelayMs = (attempt: number) =>
  attempt <= 6 ? 2 ** attempt * 15_000 : undefined;

export async function startXenditStandin(options: XenditStandinOptions) {
  const invoices: Invoice[] = [];
  const refunds: Refund[] = [];
  const keys = new Map<string, { body: string; refundId: string }>();
  const faults = new Faults();
  const retryDelayMs = options.retryDelayMs ?? xenditRetryDelayMs;
  const invoiceNotifier = new Notifier({
    url: options.invoiceCallbackUrl,
    timeScale: options.timeScale,
    retryDelayMs,
  });
  const refundNotifier = new Notifier({
    url: options.refundCallbackUrl,
    timeScale: options.timeScale,
    retryDelayMs,
  });
  const headers = () => ({
    'content-type': 'application/json',
    'x-callback-token': options.callbackToken,
  });

  const error = (status: number, error_code: string, message: string): StandinResponse => ({
    status,
    body: { error_code, message },
  });
  const invoice = (invoiceId: string) => invoices.find((i) => i.id === invoiceId);
  const booked = (invoiceId: string) =>
    refunds
      .filter((r) => r.invoice_id === invoiceId && r.status !== 'FAILED')
      .reduce((s, r) => s + r.amount, 0);

  const createInvoice = (body: Record<string, unknown>): StandinResponse => {
    const amount = body.amount;
    if (typeof body.external_id !== 'string' || typeof amount !== 'number' || !(amount > 0)) {
      return error(400, 'API_VALIDATION_ERROR', 'external_id and a positive amount are required');
    }
    const id = randomBytes(12).toString('hex');
    const created: Invoice = {
      id,
      external_id: body.external_id,
      user_id: '5f27a14a9bf05c73dd040bc8',
      status: 'PENDING',
      merchant_name: 'galang',
      amount,
      currency: typeof body.currency === 'string' ? body.currency : 'IDR',
      description: typeof body.description === 'string' ? body.description : '',
      invoice_url: `https://checkout-staging.xendit.co/web/${id}`,
      payment_methods: Array.isArray(body.payment_methods)
        ? (body.payment_methods as string[])
        : [],
      expiry_date: new Date(Date.now() + 86_400_000).toISOString(),
      created: iso(),
      updated: iso(),
    };
    invoices.push(created);
    return { status: 200, body: created };
  };

  const createRefund = (req: StandinRequest): StandinResponse => {
    const key = req.headers['idempotency-key'];
    if (typeof key === 'string') {
      const seen = keys.get(key);
      if (seen && seen.body !== req.rawBody) {
        return error(409, 'IDEMPOTENCY_ERROR', 'idempotency-key was used with a different request');
      }
      const made = seen && refunds.find((r) => r.id === seen.refundId);
      if (made) return { status: 200, body: made };
    }
    const b = req.body;
    const found = typeof b.invoice_id === 'string' ? invoice(b.invoice_id) : undefined;
    if (!found) return error(404, 'DATA_NOT_FOUND', 'invoice not found');
    const type = REFUNDABLE[found.payment_channel ?? ''];
    if (!type || found.status === 'PENDING' || found.status === 'EXPIRED') {
      return error(
        400,
        'INELIGIBLE_TRANSACTION',
        'this payment cannot be refunded through the API',
      );
    }
    if (refunds.some((r) => r.invoice_id === found.id && r.status === 'PENDING')) {
      return error(409, 'REFUND_IN_PROGRESS', 'another refund of this payment is pending');
    }
    const amount = typeof b.amount === 'number' ? b.amount : found.amount - booked(found.id);
    if (!(amount > 0) || amount > found.amount - booked(found.id)) {
      return error(400, 'INVALID_AMOUNT', 'refund amount exceeds the refundable amount');
    }
    const refund: Refund = {
      id: `rfd-${randomUUID()}`,
      invoice_id: found.id,
      payment_request_id: null,
      payment_id: null,
      amount,
      currency: found.currency,
      status: 'PENDING',
      reason: typeof b.reason === 'string' ? b.reason : 'OTHERS',
      reference_id: typeof b.reference_id === 'string' ? b.reference_id : randomUUID(),
      failure_code: null,
      payment_method_type: type,
      channel_code: found.payment_channel ?? '',
      metadata: null,
      created: iso(),
      updated: iso(),
    };
    refunds.push(refund);
    if (typeof key === 'string') keys.set(key, { body: req.rawBody, refundId: refund.id });
    return { status: 200, body: refund };
  };

  const listRefunds = (req: StandinRequest): StandinResponse => {
    const q = req.url.searchParams;
    const limit = Math.min(Number(q.get('limit') ?? 10) || 10, 100);
    const all = refunds.filter((r) => !q.get('invoice_id') || r.invoice_id === q.get('invoice_id'));
    const after = q.get('after_id');
    const start = after ? all.findIndex((r) => r.id === after) + 1 : 0;
    return {
      status: 200,
      body: { data: all.slice(start, start + limit), has_more: start + limit < all.length },
    };
  };

  const routes: Route[] = [
    // xendit-node and xendit-php post to `/v2/invoices/`; galang's adapter to `/v2/invoices`.
    { method: 'POST', path: /^\/v2\/invoices\/?$/, handle: (req) => createInvoice(req.body) },
    {
      // Answers an array (xendit-node `getInvoices`), oldest first: Xendit documents no order.
      method: 'GET',
      path: /^\/v2\/invoices$/,
      handle: (req) => ({
        status: 200,
        body: invoices.filter((i) => i.external_id === req.url.searchParams.get('external_id')),
      }),
    },
    {
      method: 'GET',
      path: /^\/v2\/invoices\/([^/]+)$/,
      handle: (_r, [invoiceId = '']) => {
        const found = invoice(invoiceId);
        return found
          ? { status: 200, body: found }
          : error(404, 'INVOICE_NOT_FOUND_ERROR', 'Could not find invoice');
      },
    },
    {
      method: 'POST',
      path: /^\/invoices\/([^/]+)\/expire!$/,
      handle: (_r, [invoiceId = '']) => {
        const found = invoice(invoiceId);
        // INVOICE_NOT_FOUND_ERROR is xendit-node's 404; that a paid or expired invoice answers
        // it too is the stand-in's choice (not in the docs).
        if (!found || found.status !== 'PENDING')
          return error(404, 'INVOICE_NOT_FOUND_ERROR', 'Could not find a pending invoice');
        Object.assign(found, { status: 'EXPIRED', updated: iso() });
        invoiceNotifier.notify(JSON.stringify(found), headers);
        return { status: 200, body: found };
      },
    },
    { method: 'POST', path: /^\/refunds$/, handle: createRefund },
    { method: 'GET', path: /^\/refunds\/?$/, handle: listRefunds },
  ];
  const authed = routes.map((r) => ({
    ...r,
    handle: (req: StandinRequest, p: string[]) =>
      basicUser(req.headers) === options.secretKey
        ? r.handle(req, p)
        : error(401, 'INVALID_API_KEY', 'API key is invalid'),
  }));
  const loopback = await startLoopback({
    routes: authed,
    faults,
    notFound: () => error(404, 'NOT_FOUND', 'not found'),
    faultBody: (status) =>
      status === 429
        ? { error_code: 'RATE_LIMIT_EXCEEDED', message: 'rate limited' }
        : { error_code: 'SERVER_ERROR', message: 'stand-in fault' },
  });

  const mustInvoice = (invoiceId: string) => {
    const found = invoice(invoiceId);
    if (!found) throw new Error(`no invoice ${invoiceId}`);
    return found;
  };
  const refundEvent = (refund: Refund, event: 'refund.succeeded' | 'refund.failed') =>
    refundNotifier.notify(
      JSON.stringify({
        event,
        business_id: '5f27a14a9bf05c73dd040bc8',
        created: iso(),
        data: refund,
      }),
      headers,
    );
  const settle = (
    refundId: string,
    status: 'SUCCEEDED' | 'FAILED',
    failureCode: string | null = null,
  ) => {
    const refund = refunds.find((r) => r.id === refundId);
    if (!refund || refund.status !== 'PENDING') throw new Error(`no pending refund ${refundId}`);
    Object.assign(refund, { status, failure_code: failureCode, updated: iso() });
    refundEvent(refund, status === 'SUCCEEDED' ? 'refund.succeeded' : 'refund.failed');
    return refund;
  };

  return {
    url: loopback.url,
    calls: loopback.calls,
    faults,
    invoiceNotifier,
    refundNotifier,
    invoices: (externalId: string) => invoices.filter((i) => i.external_id === externalId),
    refundsOf: (invoiceId: string) => refunds.filter((r) => r.invoice_id === invoiceId),
    /** The donor paid through `channel` (CREDIT_CARD, OVO, QRIS, BCA…): the PAID callback. */
    pay: (invoiceId: string, channel = 'CREDIT_CARD') => {
      const found = mustInvoice(invoiceId);
      if (found.status !== 'PENDING') throw new Error(`invoice ${found.status}`);
      Object.assign(found, {
        status: 'PAID',
        paid_amount: found.amount,
        payment_method: REFUNDABLE[channel] ?? 'BANK_TRANSFER',
        payment_channel: channel,
        paid_at: iso(),
        updated: iso(),
      });
      invoiceNotifier.notify(JSON.stringify(found), headers);
      return found;
    },
    expire: (invoiceId: string) => {
      const found = mustInvoice(invoiceId);
      Object.assign(found, { status: 'EXPIRED', updated: iso() });
      invoiceNotifier.notify(JSON.stringify(found), headers);
    },
    settleRefund: (refundId: string) => settle(refundId, 'SUCCEEDED'),
    failRefund: (refundId: string, code = 'REFUND_FAILED') => settle(refundId, 'FAILED', code),
    close: async () => {
      invoiceNotifier.close();
      refundNotifier.close();
      await loopback.close();
    },
  };
}

export type XenditStandin = Awaited<ReturnType<typeof startXenditStandin>>;
