import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { midtransSignature } from '../../src/providers/midtrans/midtrans-provider';
import type {
  MidtransRefund,
  MidtransTransaction,
} from '../../src/providers/midtrans/midtrans-protocol';
import type { FakeGateway } from './fake-gateway';
import { basicAuth, listenFake } from './fake-gateway';

export interface FakeMidtrans extends FakeGateway {
  /** How refunds end: `denied` answers 202 "Refund denied by the bank" and books nothing. */
  refundOutcome: 'approved' | 'denied';
  /** Approved refunds are bank-confirmed at once, or only when a test calls confirmRefund. */
  refundConfirmation: 'immediate' | 'manual';
  /** Sets `bank_confirmed_at` on a refund (all of the transaction's when no id is given). */
  confirmRefund(id: string, refundChargebackId?: string): void;
  /** The HTTP notification Midtrans would send for the transaction now, signed. */
  notification(id: string): Buffer;
  transaction(id: string): MidtransTransaction | undefined;
}

const STATUS_CODES: Record<string, string> = {
  pending: '201',
  settlement: '200',
  capture: '200',
  refund: '200',
  partial_refund: '200',
  chargeback: '200',
  partial_chargeback: '200',
  cancel: '200',
  deny: '202',
  expire: '407',
};

/** "YYYY-MM-DD HH:mm:ss" in GMT+7, as Midtrans writes times. */
const midtransNow = () =>
  new Date(Date.now() + 7 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');

/**
 * Midtrans' Core API on loopback, as docs.midtrans.com documents it: errors as HTTP 200 with a
 * `status_code`; 406 for a repeated order_id or refund_key; 407 from the status read of an
 * expired transaction; 412 when a status can no longer change; 202 for a refund the bank denies
 * (the payment stays settled); refunds listed in `refunds[]` with `bank_confirmed_at` once the
 * bank confirmed them. Transactions are found by order_id or transaction_id.
 */
export async function fakeMidtrans(serverKey: string): Promise<FakeMidtrans> {
  const app = Fastify();
  const orders = new Map<string, MidtransTransaction>();
  const byTransaction = new Map<string, string>();
  const usedRefundKeys = new Set<string>();
  const charges = new Map<string, number>();
  const refunds = new Map<string, number>();
  let refundSeq = 0;
  const find = (id: string) => orders.get(id) ?? orders.get(byTransaction.get(id) ?? '');
  const answer = (t: MidtransTransaction, message: string) => ({
    ...t,
    status_code: STATUS_CODES[t.transaction_status] ?? '200',
    status_message: message,
  });
  const missing = { status_code: '404', status_message: "Transaction doesn't exist." };

  app.addHook('onRequest', async (request, reply) => {
    if (request.headers.authorization !== basicAuth(serverKey)) {
      return reply.code(401).send({ status_code: '401', status_message: 'Access denied' });
    }
  });

  app.post('/v2/charge', async (request) => {
    const body = request.body as {
      payment_type: string;
      transaction_details: { order_id: string; gross_amount: number };
    };
    const { order_id: orderId, gross_amount: gross } = body.transaction_details;
    if (
      !Number.isSafeInteger(gross) ||
      !['qris', 'bank_transfer', 'echannel'].includes(body.payment_type)
    ) {
      return { status_code: '400', status_message: 'Validation Error' };
    }
    if (orders.has(orderId)) return { status_code: '406', status_message: 'Duplicate order ID' };
    const id = randomUUID();
    const transaction: MidtransTransaction = {
      status_code: '201',
      transaction_id: id,
      order_id: orderId,
      gross_amount: `${gross}.00`,
      currency: 'IDR',
      payment_type: body.payment_type,
      transaction_status: 'pending',
      fraud_status: 'accept',
      transaction_time: midtransNow(),
      ...(body.payment_type === 'qris' && {
        actions: [
          {
            name: 'generate-qr-code',
            method: 'GET',
            url: `https://api.midtrans.com/v2/qris/${id}/qr-code`,
          },
        ],
      }),
      ...(body.payment_type === 'bank_transfer' && {
        va_numbers: [{ bank: 'bca', va_number: '490526303019299' }],
      }),
      ...(body.payment_type === 'echannel' && { bill_key: '990000000260', biller_code: '70012' }),
    };
    orders.set(orderId, transaction);
    byTransaction.set(id, orderId);
    charges.set(orderId, (charges.get(orderId) ?? 0) + 1);
    return answer(transaction, 'Success, transaction is created');
  });

  app.get<{ Params: { id: string } }>('/v2/:id/status', async (request) => {
    const t = find(request.params.id);
    if (!t) return missing;
    return answer(
      t,
      t.transaction_status === 'expire'
        ? 'Transaction is expired'
        : 'Success, transaction is found',
    );
  });

  app.post<{ Params: { id: string } }>('/v2/:id/cancel', async (request) => {
    const t = find(request.params.id);
    if (!t) return missing;
    if (!['pending', 'capture', 'authorize'].includes(t.transaction_status)) {
      return {
        status_code: '412',
        status_message: 'Merchant cannot modify the status of the transaction',
      };
    }
    t.transaction_status = 'cancel';
    return answer(t, 'Success, transaction is canceled');
  });

  app.post<{ Params: { id: string } }>('/v2/:id/refund', async (request) => {
    const t = find(request.params.id);
    if (!t) return missing;
    const body = request.body as { refund_key?: string; amount?: number; reason?: string };
    const key = body.refund_key ?? randomUUID();
    if (!/^[A-Za-z0-9_-]+$/.test(key))
      return { status_code: '400', status_message: 'Validation Error' };
    if (usedRefundKeys.has(key))
      return { status_code: '406', status_message: 'Duplicate refund ID' };
    if (!['settlement', 'partial_refund'].includes(t.transaction_status)) {
      return {
        status_code: '412',
        status_message: 'Merchant cannot modify the status of the transaction',
      };
    }
    const gross = Number.parseInt(t.gross_amount, 10);
    const refunded = (t.refunds ?? []).reduce(
      (sum, r) => sum + Number.parseInt(r.refund_amount, 10),
      0,
    );
    const amount = body.amount ?? gross - refunded;
    if (amount < 1 || amount > gross - refunded) {
      return {
        status_code: '414',
        status_message: 'Refund request is rejected due to invalid amount',
      };
    }
    usedRefundKeys.add(key);
    refunds.set(key, (refunds.get(key) ?? 0) + 1);
    const refundChargebackId = ++refundSeq;
    if (fake.refundOutcome === 'denied') {
      return {
        ...answer(t, 'Refund denied by the bank'),
        status_code: '202',
        refund_chargeback_id: refundChargebackId,
        refund_amount: '0.00',
        refund_key: key,
      };
    }
    const refund: MidtransRefund = {
      refund_chargeback_id: refundChargebackId,
      refund_amount: `${amount}.00`,
      created_at: midtransNow(),
      reason: body.reason ?? '',
      refund_key: key,
      ...(fake.refundConfirmation === 'immediate' && {
        refund_method: 'online',
        bank_confirmed_at: midtransNow(),
      }),
    };
    t.refunds = [...(t.refunds ?? []), refund];
    t.refund_amount = `${refunded + amount}.00`;
    t.transaction_status = refunded + amount === gross ? 'refund' : 'partial_refund';
    return {
      ...answer(t, 'Success, refund request is approved'),
      refunds: undefined,
      refund_chargeback_id: refundChargebackId,
      refund_amount: refund.refund_amount,
      refund_key: key,
    };
  });

  const fake: FakeMidtrans = {
    ...(await listenFake(app)),
    charges,
    refunds,
    refundOutcome: 'approved',
    refundConfirmation: 'immediate',
    set(id, status) {
      const t = find(id);
      if (!t) throw new Error(`no Midtrans transaction ${id}`);
      t.transaction_status = status;
    },
    confirmRefund(id, refundChargebackId) {
      for (const r of find(id)?.refunds ?? []) {
        if (
          refundChargebackId === undefined ||
          String(r.refund_chargeback_id) === refundChargebackId
        ) {
          r.refund_method = 'online';
          r.bank_confirmed_at = midtransNow();
        }
      }
    },
    notification(id) {
      const t = find(id);
      if (!t) throw new Error(`no Midtrans transaction ${id}`);
      const statusCode =
        STATUS_CODES[t.transaction_status] === '407'
          ? '202'
          : (STATUS_CODES[t.transaction_status] ?? '200');
      return Buffer.from(
        JSON.stringify({
          ...t,
          status_code: statusCode,
          status_message: 'midtrans payment notification',
          signature_key: midtransSignature(t.order_id, statusCode, t.gross_amount, serverKey),
        }),
      );
    },
    transaction: find,
  };
  return fake;
}
