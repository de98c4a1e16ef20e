import { randomUUID } from 'node:crypto';
import { Faults, basicUser, startLoopback } from './loopback';
import type { Loopback, Route, StandinResponse } from './loopback';
import { Notifier } from './notifier';
import {
  MIDTRANS_RETRY_MINUTES,
  REFUNDABLE,
  REVERSIBLE,
  midtransRetries,
  midtransStandinSignature,
  now,
  refunded,
  rupiah,
  view,
} from './midtrans-wire';
import type { Txn } from './midtrans-wire';

export { MIDTRANS_RETRY_MINUTES, midtransRetries, midtransStandinSignature } from './midtrans-wire';

/**
 * Midtrans Core API as its documentation describes it (naelrudd/midtrans-docs-llm-agents):
 * reference/charge-transactions-1.md, docs/transaction-status-cycle.md (paths take ORDER_ID or
 * TRANSACTION_ID; settlement → deny reversal), reference/refund-transaction.md and
 * reference/direct-refund-transaction.md (refund_key, 406, 202 bank denial, two refund
 * notifications), reference/status-code-4xx.md, docs/https-notification-webhooks.md
 * (signature, retry policy). Errors answer HTTP 200 with their own `status_code`, as the
 * OpenAPI definitions list them; `errorsAsHttpStatus` mirrors them in the HTTP status too.
 */
export interface MidtransStandinOptions {
  serverKey: string;
  notificationUrl: string;
  timeScale?: number;
  errorsAsHttpStatus?: boolean;
}

export async function startMidtransStandin(options: MidtransStandinOptions) {
  const txns = new Map<string, Txn>();
  /** refund_key → what its attempts did: `denied` keys may be reattempted (7 days). */
  const refundKeys = new Map<
    string,
    { orderId: string; id: number; booked: boolean; at: number }
  >();
  const denyNextRefund = new Set<string>();
  let nextRefundId = 1;
  const faults = new Faults();
  const notifier = new Notifier({
    url: options.notificationUrl,
    timeScale: options.timeScale,
    retryDelayMs: (attempt, status) =>
      attempt <= midtransRetries(status)
        ? (MIDTRANS_RETRY_MINUTES[attempt - 1] ?? 210) * 60_000
        : undefined,
  });

  const error = (code: number, message: string): StandinResponse => ({
    status: options.errorsAsHttpStatus ? code : 200,
    body: { status_code: String(code), status_message: message },
  });
  const find = (id: string) =>
    txns.get(id) ?? [...txns.values()].find((t) => t.transaction_id === id);

  const notify = (t: Txn) => {
    const body = { ...view(t), status_message: 'midtrans payment notification' };
    const signature_key = midtransStandinSignature(
      body.order_id,
      body.status_code,
      body.gross_amount,
      options.serverKey,
    );
    notifier.notify(JSON.stringify({ ...body, signature_key }), () => ({
      'content-type': 'application/json',
      accept: 'application/json',
      'user-agent': 'Veritrans',
    }));
  };

  const refund = (
    params: string[],
    body: Record<string, unknown>,
    direct: boolean,
  ): StandinResponse => {
    const t = find(params[0] ?? '');
    if (!t) return error(404, "Transaction doesn't exist.");
    const key = typeof body.refund_key === 'string' ? body.refund_key : `mt-${randomUUID()}`;
    if (!/^[A-Za-z0-9_-]+$/.test(key))
      return error(400, 'refund_key allows alphabets, numbers, - and _');
    const prior = refundKeys.get(key);
    if (prior && (prior.booked || Date.now() - prior.at > 7 * 86_400_000))
      return error(406, 'Duplicate refund ID');
    if (
      !['settlement', 'partial_refund'].includes(t.transaction_status) ||
      !REFUNDABLE.has(t.payment_type)
    ) {
      return error(412, 'Merchant cannot modify the status of the transaction');
    }
    const amount = body.amount === undefined ? t.gross - refunded(t) : Number(body.amount);
    if (!Number.isInteger(amount) || amount <= 0 || amount > t.gross - refunded(t)) {
      return error(414, 'Refund request is rejected due to invalid amount');
    }
    const id = prior?.id ?? nextRefundId++;
    if (denyNextRefund.delete(t.order_id)) {
      refundKeys.set(key, { orderId: t.order_id, id, booked: false, at: prior?.at ?? Date.now() });
      return {
        status: options.errorsAsHttpStatus ? 202 : 200,
        body: {
          ...view(t),
          status_code: '202',
          status_message: 'Refund denied by the bank',
          refund_chargeback_id: id,
          refund_amount: '0.00',
          refund_key: key,
        },
      };
    }
    refundKeys.set(key, { orderId: t.order_id, id, booked: true, at: prior?.at ?? Date.now() });
    const reason = typeof body.reason === 'string' ? body.reason : '';
    t.refunds.push({
      refund_chargeback_id: id,
      refund_amount: amount,
      created_at: now(),
      reason,
      refund_key: key,
      refund_method: 'online',
    });
    t.transaction_status = refunded(t) === t.gross ? 'refund' : 'partial_refund';
    notify(t); // Sent before the bank confirms; `confirmRefund` sends the second one.
    return {
      status: 200,
      body: {
        ...view(t),
        status_code: '200',
        status_message: direct
          ? 'Success, refund request is approved by the bank'
          : 'Success, refund request is approved',
        refund_chargeback_id: id,
        refund_amount: rupiah(amount),
        refund_key: key,
      },
    };
  };

  const routes: Route[] = [
    {
      method: 'POST',
      path: /^\/v2\/charge$/,
      handle: (req) => {
        const details = (req.body.transaction_details ?? {}) as {
          order_id?: unknown;
          gross_amount?: unknown;
        };
        const orderId = typeof details.order_id === 'string' ? details.order_id : '';
        const gross = Number(details.gross_amount);
        if (!orderId || !Number.isInteger(gross) || gross < 1)
          return error(400, 'Validation Error');
        if (txns.has(orderId))
          return error(406, 'Duplicate order ID. Order ID has already been utilized previously');
        const type = String(req.body.payment_type);
        const bank = (req.body.bank_transfer as { bank?: string } | undefined)?.bank;
        const t: Txn = {
          order_id: orderId,
          transaction_id: randomUUID(),
          payment_type: type,
          gross,
          transaction_status: 'pending',
          transaction_time: now(),
          refunds: [],
          chargedBack: 0,
          ...(bank ? { bank } : {}),
        };
        txns.set(orderId, t);
        const qr =
          type === 'qris'
            ? {
                qr_string: `00020101021226${t.transaction_id}`,
                actions: [
                  {
                    name: 'generate-qr-code',
                    method: 'GET',
                    url: `${loopback.url}/v2/qris/${t.transaction_id}/qr-code`,
                  },
                ],
              }
            : {};
        return {
          status: 200,
          body: { ...view(t), status_message: `Success, ${type} transaction is created`, ...qr },
        };
      },
    },
    {
      method: 'GET',
      path: /^\/v2\/([^/]+)\/status$/,
      handle: (_req, [id = '']) => {
        const t = find(id);
        return t
          ? { status: 200, body: { ...view(t), status_message: 'Success, transaction is found' } }
          : error(404, "Transaction doesn't exist.");
      },
    },
    {
      method: 'POST',
      path: /^\/v2\/([^/]+)\/(cancel|expire)$/,
      handle: (_req, [id = '', action]) => {
        const t = find(id);
        if (!t) return error(404, "Transaction doesn't exist.");
        const from = action === 'cancel' ? ['pending', 'capture', 'authorize'] : ['pending'];
        if (!from.includes(t.transaction_status))
          return error(412, 'Merchant cannot modify the status of the transaction');
        t.transaction_status = action === 'cancel' ? 'cancel' : 'expire';
        notify(t);
        return {
          status: 200,
          body: {
            ...view(t),
            status_message: `Success, transaction is ${action === 'cancel' ? 'canceled' : 'expired'}`,
          },
        };
      },
    },
    {
      method: 'POST',
      path: /^\/v2\/([^/]+)\/refund$/,
      handle: (req, p) => refund(p, req.body, false),
    },
    {
      method: 'POST',
      path: /^\/v2\/([^/]+)\/refund\/online\/direct$/,
      handle: (req, p) => refund(p, req.body, true),
    },
  ];
  const guarded = routes.map((r) => ({
    ...r,
    handle: (req: Parameters<Route['handle']>[0], p: string[]) =>
      basicUser(req.headers) === options.serverKey
        ? r.handle(req, p)
        : error(
            401,
            'Access denied due to unauthorized transaction, please check client key or server key',
          ),
  }));
  const loopback: Loopback = await startLoopback({
    routes: guarded,
    faults,
    notFound: () => error(404, 'The requested resource is not found'),
    faultBody: (status) => ({ status_code: String(status), status_message: 'stand-in fault' }),
  });

  const must = (orderId: string) => {
    const t = find(orderId);
    if (!t) throw new Error(`no Midtrans transaction ${orderId}`);
    return t;
  };
  const move = (orderId: string, from: string[], to: string) => {
    const t = must(orderId);
    if (!from.includes(t.transaction_status))
      throw new Error(`${t.transaction_status} cannot become ${to}`);
    t.transaction_status = to;
    if (to === 'settlement') t.settlement_time = now();
    notify(t);
    return t;
  };

  return {
    url: loopback.url,
    calls: loopback.calls,
    faults,
    notifier,
    transaction: (id: string) => {
      const t = find(id);
      return t ? view(t) : undefined;
    },
    pay: (orderId: string) => move(orderId, ['pending'], 'settlement'),
    expire: (orderId: string) => move(orderId, ['pending'], 'expire'),
    deny: (orderId: string) => move(orderId, ['pending'], 'deny'),
    /** The documented reversal: settlement → deny, Permata, Mandiri Bill and Indomaret only. */
    reverse: (orderId: string) => {
      if (!REVERSIBLE(must(orderId)))
        throw new Error('Midtrans documents no reversal for this payment type');
      return move(orderId, ['settlement'], 'deny');
    },
    /** A chargeback of `amount` (default: what is left); partial ones may later become whole. */
    chargeback: (orderId: string, amount?: number) => {
      const t = must(orderId);
      t.chargedBack += amount ?? t.gross - refunded(t) - t.chargedBack;
      const whole = t.chargedBack >= t.gross - refunded(t);
      return move(
        orderId,
        ['settlement', 'partial_refund', 'partial_chargeback'],
        whole ? 'chargeback' : 'partial_chargeback',
      );
    },
    denyNextRefund: (orderId: string) => denyNextRefund.add(must(orderId).order_id),
    /** The bank confirmed the refund: `bank_confirmed_at` is set and a second notification sent. */
    confirmRefund: (orderId: string, refundKey: string) => {
      const t = must(orderId);
      const r = t.refunds.find((x) => x.refund_key === refundKey);
      if (!r) throw new Error(`no refund ${refundKey}`);
      r.bank_confirmed_at = now();
      notify(t);
    },
    close: async () => {
      notifier.close();
      await loopback.close();
    },
  };
}

export type MidtransStandin = Awaited<ReturnType<typeof startMidtransStandin>>;
