import type { FastifyReply } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { PaymentPlan } from './simulator-knobs';
import { SimulatorRefusal } from './simulator-payments';
import type { SimulatedPayments } from './simulator-payments';
import type { SavedMethods } from './simulator-saved-methods';
import type { SimulatorApp } from './simulator-control-routes';
import type { SimulatorPayment, SimulatorRefund } from './simulator-protocol';

const IdParams = Type.Object({ id: Type.String() });

const RefundBody = Type.Object({
  amount: Type.Integer({ minimum: 1 }),
  reason: Type.Optional(Type.String({ maxLength: 255 })),
});

const CreateBody = Type.Object({
  reference: Type.String({ minLength: 1, maxLength: 64 }),
  amount: Type.Integer({ minimum: 1 }),
  currency: Type.String({ pattern: '^[A-Z]{3}$' }),
  method: Type.String({ minLength: 1, maxLength: 32 }),
  description: Type.Optional(Type.String({ maxLength: 255 })),
  /** Keep the method the donor pays with, for charges without them. */
  save_method: Type.Optional(Type.Boolean()),
  /** Charge this kept method now, without the donor. */
  saved_method: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
});

/** A refusal as the simulator answers it: `{error, code}` with its HTTP status. */
function sendRefusal(reply: FastifyReply, refusal: SimulatorRefusal, extra: object = {}) {
  return reply
    .code(refusal.httpStatus)
    .send({ error: refusal.message, code: refusal.code, ...extra });
}

/** The idempotency keys the gateway's API has seen, and what each one made. */
export class GatewayKeys {
  readonly payments = new Map<string, { paymentId: string; body: string }>();
  readonly refunds = new Map<string, { refundId: string; body: string }>();
  /** Payments created per key: "charged once" is a count of 1. */
  readonly charges = new Map<string, number>();
  readonly refundCounts = new Map<string, number>();
  /** Keys whose payment was declined: the same request is declined again. */
  readonly declined = new Set<string>();

  /** Forgets the keys, as a gateway does once its window has passed; counts are kept. */
  forget(): void {
    this.payments.clear();
    this.refunds.clear();
  }
}

/** What the gateway's API routes work on: the simulator's book, keys, knobs and timers. */
export interface GatewayApi {
  book: SimulatedPayments;
  keys: GatewayKeys;
  savedMethods: SavedMethods;
  knobs(reference: string | undefined): PaymentPlan;
  sleep(ms: number): Promise<void>;
  autoPay(payment: SimulatorPayment, plan: PaymentPlan): void;
  makeRefund(payment: SimulatorPayment, amount: number): SimulatorRefund;
}

/**
 * The hosted gateway's API as galang's adapter calls it: payments created and refunded under
 * idempotency keys, read, cancelled and (as a sandbox allows) paid, with the planned latency,
 * errors and declines.
 */
export function registerGatewayRoutes(app: SimulatorApp, api: GatewayApi): void {
  app.setErrorHandler((error, _request, reply) => {
    if (error instanceof SimulatorRefusal) return sendRefusal(reply, error);
    const status = (error as { statusCode?: number }).statusCode ?? 500;
    return reply.code(status).send({ error: (error as Error).message, code: 'invalid_request' });
  });

  // Latency and transient errors on the API (not the test controls), per payment.
  app.addHook('preHandler', async (request, reply) => {
    if (request.url.startsWith('/test/')) return;
    const params = request.params as { id?: string } | undefined;
    const body = request.body as { reference?: string } | undefined;
    const reference =
      body?.reference ?? (params?.id ? api.book.get(params.id)?.reference : undefined);
    const knobs = api.knobs(reference);
    if (knobs.latencyMs) await api.sleep(knobs.latencyMs);
    if (knobs.errorRate && Math.random() < knobs.errorRate) {
      return reply.code(503).send({ error: 'simulated gateway error', code: 'unavailable' });
    }
  });

  app.post('/v1/payments', { schema: { body: CreateBody } }, async (request, reply) => {
    const key = request.headers['idempotency-key'];
    if (typeof key !== 'string' || key.length === 0) {
      return reply
        .code(400)
        .send({ error: 'Idempotency-Key header required', code: 'invalid_request' });
    }
    const body = JSON.stringify(request.body);
    const previous = api.keys.payments.get(key);
    if (previous) {
      if (previous.body !== body) {
        return reply.code(422).send({
          error: 'Idempotency-Key reused with another request',
          code: 'idempotency_mismatch',
        });
      }
      return reply.code(200).send(api.book.get(previous.paymentId));
    }
    const plan = api.knobs(request.body.reference);
    const charged = request.body.saved_method;
    // A kept method answers for itself (its state), before any planned decline.
    const methodState = charged === undefined ? undefined : api.savedMethods.charge(charged);
    const declined =
      methodState === undefined &&
      (api.keys.declined.has(key) || plan.decline || Math.random() < (plan.declineRate ?? 0));
    if (declined) {
      // The same request is declined again: a decline is an answer, not a transient error.
      api.keys.declined.add(key);
      return reply
        .code(402)
        .send({ error: 'payment declined by the issuer', code: 'card_declined' });
    }
    const payment = api.book.add({
      reference: request.body.reference,
      status: 'pending',
      amount: request.body.amount,
      currency: request.body.currency,
      method: request.body.method,
      action: { type: 'qr', value: `00020101021226SIMULATOR${request.body.reference}` },
      created_at: new Date().toISOString(),
      ...(plan.payAmount !== undefined && { paid_amount: plan.payAmount }),
      ...(request.body.save_method === true && { save_method: true }),
      ...(charged !== undefined && { charged_method: charged }),
    });
    api.keys.payments.set(key, { paymentId: payment.id, body });
    api.keys.charges.set(key, (api.keys.charges.get(key) ?? 0) + 1);
    if (methodState === 'ok') {
      api.book.movePayment(payment.id, 'settled');
    } else if (methodState === 'insufficient_funds' || methodState === 'expired_card') {
      // Like Stripe's off-session decline: 402, and the declined payment in the answer.
      api.book.movePayment(payment.id, 'declined');
      return reply
        .code(402)
        .send({ error: `declined: ${methodState}`, code: methodState, payment });
    } else {
      // A new payment, or a kept method that needs the donor to authenticate: they pay.
      api.autoPay(payment, plan);
    }
    return reply.code(201).send(payment);
  });

  app.get('/v1/payments/:id', { schema: { params: IdParams } }, async (request) =>
    api.book.need(request.params.id),
  );

  app.post('/v1/payments/:id/cancel', { schema: { params: IdParams } }, async (request, reply) => {
    try {
      return api.book.cancel(request.params.id);
    } catch (error) {
      if (!(error instanceof SimulatorRefusal) || error.httpStatus !== 409) throw error;
      // Like Stripe's refusal, the answer says what the payment is now.
      return sendRefusal(reply, error, { payment: api.book.get(request.params.id) });
    }
  });

  // A kept method let go: released once; after that (or never kept) it is a 404.
  app.delete('/v1/saved-methods/:id', { schema: { params: IdParams } }, async (request) =>
    api.savedMethods.release(request.params.id),
  );

  // A sandbox's "simulate payment" (Xendit's and Midtrans's sandboxes have one): the donor
  // pays now. Settling twice, or after auto-pay did, changes nothing.
  app.post<{ Params: { id: string } }>('/v1/payments/:id/simulate', async (request, reply) => {
    const payment = api.book.get(request.params.id);
    if (!payment) return reply.code(404).send({ error: 'not found' });
    if (payment.status === 'pending') api.book.movePayment(payment.id, 'settled');
    return payment;
  });

  app.post(
    '/v1/payments/:id/refunds',
    { schema: { params: IdParams, body: RefundBody } },
    async (request, reply) => {
      const key = request.headers['idempotency-key'];
      if (typeof key !== 'string' || key.length === 0) {
        return reply
          .code(400)
          .send({ error: 'Idempotency-Key header required', code: 'invalid_request' });
      }
      const payment = api.book.need(request.params.id);
      const body = JSON.stringify({ payment: payment.id, amount: request.body.amount });
      const previous = api.keys.refunds.get(key);
      if (previous) {
        if (previous.body !== body) {
          return reply.code(422).send({
            error: 'Idempotency-Key reused with another request',
            code: 'idempotency_mismatch',
          });
        }
        return reply.code(200).send(api.book.refundById(previous.refundId)?.refund);
      }
      const refund = api.makeRefund(payment, request.body.amount);
      api.keys.refunds.set(key, { refundId: refund.id, body });
      api.keys.refundCounts.set(key, (api.keys.refundCounts.get(key) ?? 0) + 1);
      return reply.code(201).send(refund);
    },
  );
}
