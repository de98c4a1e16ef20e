import type { FastifyInstance, FastifyReply } from 'fastify';
import { Type } from '@sinclair/typebox';
import { SimulatorDelivery } from './simulator-delivery';
import type { PaymentPlan, SimulatorOptions } from './simulator-knobs';
import { SimulatedPayments, SimulatorRefusal, notificationFor } from './simulator-payments';
import type { SimulatorChange } from './simulator-payments';
import { createSimulatorApp, registerControlRoutes } from './simulator-control-routes';
import type { SimulatorApp, SimulatorControls } from './simulator-control-routes';
import type {
  SimulatorDispute,
  SimulatorDisputeStatus,
  SimulatorPayment,
  SimulatorPaymentStatus,
  SimulatorRefund,
  SimulatorRefundStatus,
} from './simulator-protocol';

export type { PaymentPlan, SimulatorKnobs, SimulatorOptions } from './simulator-knobs';

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
});

/** A refusal as the simulator answers it: `{error, code}` with its HTTP status. */
export function sendRefusal(reply: FastifyReply, refusal: SimulatorRefusal, extra: object = {}) {
  return reply
    .code(refusal.httpStatus)
    .send({ error: refusal.message, code: refusal.code, ...extra });
}

/** The state a final one replaced, for the `reorder` knob's stale copy. */
const staleStatus = {
  settled: 'pending',
  succeeded: 'pending',
  failed: 'pending',
  won: 'open',
  lost: 'open',
};

/**
 * A local stand-in for a hosted payment gateway, on loopback: it creates payments idempotently,
 * counts charges per idempotency key (so tests can assert "charged once"), settles them after a
 * delay (optionally through `processing`), refunds them in parts, takes disputes, and notifies
 * galang of every change with Standard Webhooks signatures, retrying with backoff. Tests drive
 * each transition through its methods or its `/test/…` control endpoints.
 */
export class PaymentSimulator implements SimulatorControls {
  readonly app: FastifyInstance;
  private readonly book = new SimulatedPayments((change) => {
    this.notify(change);
  });
  private readonly byKey = new Map<string, { paymentId: string; body: string }>();
  private readonly refundsByKey = new Map<string, { refundId: string; body: string }>();
  private readonly charges = new Map<string, number>();
  private readonly refunds = new Map<string, number>();
  private readonly plans = new Map<string, PaymentPlan>();
  private readonly declined = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly delivery: SimulatorDelivery;
  private closed = false;
  /** Mutable because a test learns the API's port only after the simulator is listening. */
  webhookUrl: string;

  constructor(private readonly options: SimulatorOptions) {
    this.webhookUrl = options.webhookUrl;
    this.delivery = new SimulatorDelivery({
      webhookSecret: options.webhookSecret,
      maxDeliveryAttempts: options.maxDeliveryAttempts ?? 10,
      url: () => this.webhookUrl,
      sleep: (ms) => this.sleep(ms),
      closed: () => this.closed,
    });
    const app = createSimulatorApp();
    this.routes(app);
    registerControlRoutes(app, this);
    this.app = app;
  }

  /** How many payments were created under this idempotency key (1 is the only right answer). */
  chargeCount(idempotencyKey: string): number {
    return this.charges.get(idempotencyKey) ?? 0;
  }

  /** How many refunds were made under this idempotency key. */
  refundCount(idempotencyKey: string): number {
    return this.refunds.get(idempotencyKey) ?? 0;
  }

  payment(id: string): SimulatorPayment | undefined {
    return this.book.get(id);
  }

  paymentByReference(reference: string): SimulatorPayment | undefined {
    return this.book.byReference(reference);
  }

  /** Plans the behaviour of the payment that will carry this reference (our donation id). */
  plan(reference: string, plan: PaymentPlan): void {
    this.plans.set(reference, plan);
  }

  async listen(port: number, host = '127.0.0.1'): Promise<string> {
    return this.app.listen({ port, host });
  }

  /**
   * Moves a payment as the donor or the bank would, and notifies galang; the same status again
   * sends a fresh notification. Throws a {@link SimulatorRefusal} for a move the lifecycle forbids.
   */
  transition(id: string, status: SimulatorPaymentStatus): SimulatorPayment {
    return this.book.movePayment(id, status);
  }

  /** A refund made at the provider (its dashboard), not through galang; settles per the plan. */
  refundAtProvider(paymentId: string, amount: number): SimulatorRefund {
    return this.makeRefund(this.book.need(paymentId), amount);
  }

  /** Ends a pending refund, or fails one that succeeded (its money comes back). */
  settleRefund(
    refundId: string,
    status: Exclude<SimulatorRefundStatus, 'pending'>,
  ): SimulatorRefund {
    return this.book.moveRefund(refundId, status);
  }

  /** The bank takes the money back: `amount` defaults to all that was not refunded. */
  openDispute(paymentId: string, amount?: number): SimulatorDispute {
    return this.book.openDispute(paymentId, amount);
  }

  closeDispute(
    disputeId: string,
    status: Exclude<SimulatorDisputeStatus, 'open'>,
  ): SimulatorDispute {
    return this.book.moveDispute(disputeId, status);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    await this.app.close();
  }

  private routes(app: SimulatorApp): void {
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
        body?.reference ?? (params?.id ? this.book.get(params.id)?.reference : undefined);
      const knobs = this.knobs(reference);
      if (knobs.latencyMs) await this.sleep(knobs.latencyMs);
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
      const previous = this.byKey.get(key);
      if (previous) {
        if (previous.body !== body) {
          return reply.code(422).send({
            error: 'Idempotency-Key reused with another request',
            code: 'idempotency_mismatch',
          });
        }
        return reply.code(200).send(this.book.get(previous.paymentId));
      }
      const plan = this.knobs(request.body.reference);
      const declined =
        this.declined.has(key) || plan.decline || Math.random() < (plan.declineRate ?? 0);
      if (declined) {
        // The same request is declined again: a decline is an answer, not a transient error.
        this.declined.add(key);
        return reply
          .code(402)
          .send({ error: 'payment declined by the issuer', code: 'card_declined' });
      }
      const payment = this.book.add({
        reference: request.body.reference,
        status: 'pending',
        amount: request.body.amount,
        currency: request.body.currency,
        method: request.body.method,
        action: { type: 'qr', value: `00020101021226SIMULATOR${request.body.reference}` },
        created_at: new Date().toISOString(),
        ...(plan.payAmount !== undefined && { paid_amount: plan.payAmount }),
      });
      this.byKey.set(key, { paymentId: payment.id, body });
      this.charges.set(key, (this.charges.get(key) ?? 0) + 1);
      this.autoPay(payment, plan);
      return reply.code(201).send(payment);
    });

    app.get('/v1/payments/:id', { schema: { params: IdParams } }, async (request) =>
      this.book.need(request.params.id),
    );

    app.post(
      '/v1/payments/:id/cancel',
      { schema: { params: IdParams } },
      async (request, reply) => {
        try {
          return this.book.cancel(request.params.id);
        } catch (error) {
          if (!(error instanceof SimulatorRefusal) || error.httpStatus !== 409) throw error;
          // Like Stripe's refusal, the answer says what the payment is now.
          return sendRefusal(reply, error, { payment: this.book.get(request.params.id) });
        }
      },
    );

    // A sandbox's "simulate payment" (Xendit's and Midtrans's sandboxes have one): the donor
    // pays now. Settling twice, or after auto-pay did, changes nothing.
    app.post<{ Params: { id: string } }>('/v1/payments/:id/simulate', async (request, reply) => {
      const payment = this.book.get(request.params.id);
      if (!payment) return reply.code(404).send({ error: 'not found' });
      if (payment.status === 'pending') this.transition(payment.id, 'settled');
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
        const payment = this.book.need(request.params.id);
        const body = JSON.stringify({ payment: payment.id, amount: request.body.amount });
        const previous = this.refundsByKey.get(key);
        if (previous) {
          if (previous.body !== body) {
            return reply.code(422).send({
              error: 'Idempotency-Key reused with another request',
              code: 'idempotency_mismatch',
            });
          }
          return reply.code(200).send(this.book.refundById(previous.refundId)?.refund);
        }
        const refund = this.makeRefund(payment, request.body.amount);
        this.refundsByKey.set(key, { refundId: refund.id, body });
        this.refunds.set(key, (this.refunds.get(key) ?? 0) + 1);
        return reply.code(201).send(refund);
      },
    );
  }

  private makeRefund(payment: SimulatorPayment, amount: number): SimulatorRefund {
    const plan = this.knobs(payment.reference);
    const outcome = plan.refundOutcome ?? 'succeeded';
    const refund = this.book.refund(payment.id, amount, outcome === 'denied');
    const settleMs = plan.refundSettleMs ?? 0;
    if (outcome !== 'denied' && settleMs >= 0) {
      this.later(settleMs, () => {
        if (refund.status === 'pending') this.book.moveRefund(refund.id, outcome);
      });
    }
    return refund;
  }

  private autoPay(payment: SimulatorPayment, plan: PaymentPlan): void {
    const autoPayMs = plan.autoPayMs ?? this.options.autoPayMs;
    if (autoPayMs < 0) return;
    this.later(autoPayMs, () => {
      if (payment.status !== 'pending') return;
      if (plan.processingMs === undefined) {
        this.book.movePayment(payment.id, 'settled');
        return;
      }
      this.book.movePayment(payment.id, 'processing');
      const processingMs = plan.processingMs;
      if (processingMs >= 0) {
        this.later(processingMs, () => {
          if (payment.status === 'processing') this.book.movePayment(payment.id, 'settled');
        });
      }
    });
  }

  /** The knobs for one payment: the run's, overridden by its plan. */
  private knobs(reference: string | undefined): PaymentPlan {
    return { ...this.options, ...(reference ? this.plans.get(reference) : undefined) };
  }

  /** Builds the message now (state moves on), then delivers it with the planned adversity. */
  private notify(change: SimulatorChange): void {
    const now = new Date();
    const current = notificationFor(change, now);
    const status = current.data.status;
    const stale = Object.hasOwn(staleStatus, status)
      ? notificationFor(
          change,
          new Date(now.getTime() - 60_000),
          staleStatus[status as keyof typeof staleStatus],
        )
      : undefined;
    void this.delivery.send(this.knobs(change.payment.reference), current, stale);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.later(ms, resolve);
    });
  }

  private later(ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      fn();
    }, ms);
    this.timers.add(timer);
  }
}
