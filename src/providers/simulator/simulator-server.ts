import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { signStandardWebhook } from '../standard-webhooks';
import type {
  SimulatorNotification,
  SimulatorPayment,
  SimulatorStatus,
} from './simulator-protocol';

/**
 * Adversarial delivery, for a whole run (constructor) or one payment (`plan`). Rates are
 * probabilities from 0 to 1, drawn independently for each payment or call.
 */
export interface SimulatorKnobs {
  /** Added to every API answer, in milliseconds. */
  latencyMs?: number;
  /** Share of payments refused at creation with 402. */
  declineRate?: number;
  /** Share of API calls answered 503 (the gateway having a bad minute); clients retry. */
  errorRate?: number;
  /** Each notification is delivered this many times in all. */
  duplicates?: number;
  /** Before a settlement, deliver a stale `pending` notification after it. */
  reorder?: boolean;
  /** Deliver notifications only after this many milliseconds. */
  webhookDelayMs?: number;
}

export interface SimulatorOptions extends SimulatorKnobs {
  /** Where notifications go; see {@link PaymentSimulator.webhookUrl}. */
  webhookUrl: string;
  webhookSecret: string;
  /** Settle every new payment after this delay; negative leaves payments pending. */
  autoPayMs: number;
  /** Delivery attempts per notification while our endpoint fails. */
  maxDeliveryAttempts?: number;
}

const createTypedApp = () => Fastify({ logger: false }).withTypeProvider<TypeBoxTypeProvider>();
type TypedApp = ReturnType<typeof createTypedApp>;

/** How the simulated gateway treats one payment, planned by a test before it is created. */
export interface PaymentPlan extends SimulatorKnobs {
  /** Refuse the payment at creation with 402. */
  decline?: boolean;
  /** Settle on its own after this delay; negative leaves it pending. Defaults to the run's. */
  autoPayMs?: number;
  /** The donor pays this amount instead of the one asked for. */
  payAmount?: number;
  /** Never deliver this payment's notifications: galang must ask for the status itself. */
  dropWebhooks?: boolean;
}

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

/**
 * A local stand-in for a hosted payment gateway, on loopback: it creates payments idempotently,
 * counts charges per idempotency key (so tests can assert "charged once"), settles them after a
 * delay and notifies galang with Standard Webhooks signatures, retrying with backoff.
 */
export class PaymentSimulator {
  readonly app: FastifyInstance;
  private readonly payments = new Map<string, SimulatorPayment>();
  private readonly byKey = new Map<string, { paymentId: string; body: string }>();
  private readonly charges = new Map<string, number>();
  private readonly refunds = new Map<string, number>();
  private readonly plans = new Map<string, PaymentPlan>();
  private readonly declined = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;
  /** Mutable because a test learns the API's port only after the simulator is listening. */
  webhookUrl: string;

  constructor(private readonly options: SimulatorOptions) {
    this.webhookUrl = options.webhookUrl;
    const app = createTypedApp();
    this.routes(app);
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

  paymentByReference(reference: string): SimulatorPayment | undefined {
    return [...this.payments.values()].find((p) => p.reference === reference);
  }

  /** Plans the behaviour of the payment that will carry this reference (our donation id). */
  plan(reference: string, plan: PaymentPlan): void {
    this.plans.set(reference, plan);
  }

  async listen(port: number, host = '127.0.0.1'): Promise<string> {
    return this.app.listen({ port, host });
  }

  /** Moves a payment to a new status and notifies galang, as the gateway would. */
  transition(id: string, status: SimulatorStatus): void {
    const payment = this.payments.get(id);
    if (!payment) throw new Error(`No simulated payment ${id}`);
    payment.status = status;
    void this.notify(payment);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    await this.app.close();
  }

  private routes(app: TypedApp): void {
    // Latency and transient errors, per payment where the request names one.
    app.addHook('preHandler', async (request, reply) => {
      const params = request.params as { id?: string } | undefined;
      const body = request.body as { reference?: string } | undefined;
      const reference =
        body?.reference ?? (params?.id ? this.payments.get(params.id)?.reference : undefined);
      const knobs = this.knobs(reference);
      if (knobs.latencyMs) await this.sleep(knobs.latencyMs);
      if (knobs.errorRate && Math.random() < knobs.errorRate) {
        return reply.code(503).send({ error: 'simulated gateway error' });
      }
    });

    app.post('/v1/payments', { schema: { body: CreateBody } }, async (request, reply) => {
      const key = request.headers['idempotency-key'];
      if (typeof key !== 'string' || key.length === 0) {
        return reply.code(400).send({ error: 'Idempotency-Key header required' });
      }
      const body = JSON.stringify(request.body);
      const previous = this.byKey.get(key);
      if (previous) {
        if (previous.body !== body) {
          return reply.code(422).send({ error: 'Idempotency-Key reused with another request' });
        }
        return reply.code(200).send(this.payments.get(previous.paymentId));
      }
      const plan = this.knobs(request.body.reference);
      const declined =
        this.declined.has(key) || plan.decline || Math.random() < (plan.declineRate ?? 0);
      if (declined) {
        // The same request is declined again: a decline is an answer, not a transient error.
        this.declined.add(key);
        return reply.code(402).send({ error: 'payment declined by the issuer' });
      }
      const payment: SimulatorPayment = {
        id: `sim_${randomUUID()}`,
        reference: request.body.reference,
        status: 'pending',
        amount: request.body.amount,
        currency: request.body.currency,
        method: request.body.method,
        action: { type: 'qr', value: `00020101021226SIMULATOR${request.body.reference}` },
        created_at: new Date().toISOString(),
      };
      this.payments.set(payment.id, payment);
      this.byKey.set(key, { paymentId: payment.id, body });
      this.charges.set(key, (this.charges.get(key) ?? 0) + 1);
      if (plan.payAmount !== undefined) payment.paid_amount = plan.payAmount;
      const autoPayMs = plan.autoPayMs ?? this.options.autoPayMs;
      if (autoPayMs >= 0) {
        this.later(autoPayMs, () => {
          if (payment.status === 'pending') this.transition(payment.id, 'settled');
        });
      }
      return reply.code(201).send(payment);
    });

    app.get<{ Params: { id: string } }>('/v1/payments/:id', async (request, reply) => {
      const payment = this.payments.get(request.params.id);
      if (!payment) return reply.code(404).send({ error: 'not found' });
      return payment;
    });

    app.post<{ Params: { id: string } }>('/v1/payments/:id/cancel', async (request, reply) => {
      const payment = this.payments.get(request.params.id);
      if (!payment) return reply.code(404).send({ error: 'not found' });
      if (payment.status === 'pending') this.transition(payment.id, 'canceled');
      else if (payment.status !== 'canceled') {
        return reply.code(409).send({ error: `cannot cancel a ${payment.status} payment` });
      }
      return payment;
    });

    // A sandbox's "simulate payment" (Xendit's and Midtrans's sandboxes have one): the donor
    // pays now. Settling twice, or after auto-pay did, changes nothing.
    app.post<{ Params: { id: string } }>('/v1/payments/:id/simulate', async (request, reply) => {
      const payment = this.payments.get(request.params.id);
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
          return reply.code(400).send({ error: 'Idempotency-Key header required' });
        }
        const payment = this.payments.get(request.params.id);
        if (!payment) return reply.code(404).send({ error: 'not found' });
        if (this.refunds.has(key)) return payment;
        if (payment.status !== 'settled') {
          return reply.code(409).send({ error: `cannot refund a ${payment.status} payment` });
        }
        this.refunds.set(key, 1);
        const paid = payment.paid_amount ?? payment.amount;
        const amount = Math.min(request.body.amount, paid);
        payment.refunded_amount = amount;
        this.transition(payment.id, amount < paid ? 'partially_refunded' : 'refunded');
        return payment;
      },
    );
  }

  /** The knobs for one payment: the run's, overridden by its plan. */
  private knobs(reference: string | undefined): PaymentPlan {
    return { ...this.options, ...(reference ? this.plans.get(reference) : undefined) };
  }

  /** Notifies galang of a payment's current status, with the planned adversity. */
  private async notify(payment: SimulatorPayment): Promise<void> {
    const knobs = this.knobs(payment.reference);
    if (knobs.dropWebhooks) return;
    if (knobs.webhookDelayMs) await this.sleep(knobs.webhookDelayMs);
    const message = (status: SimulatorStatus, occurredAt: Date) =>
      JSON.stringify({
        type: 'payment.updated',
        data: {
          id: payment.id,
          reference: payment.reference,
          status,
          amount: payment.paid_amount ?? payment.amount,
          currency: payment.currency,
          occurred_at: occurredAt.toISOString(),
        },
      } satisfies SimulatorNotification);
    const id = `msg_${randomUUID()}`;
    const body = message(payment.status, new Date());
    // A duplicate is the same message delivered again, as a gateway's retry would be.
    const copies = Math.max(1, knobs.duplicates ?? 1);
    await Promise.all(Array.from({ length: copies }, () => this.deliver(id, body)));
    if (knobs.reorder && payment.status === 'settled') {
      await this.deliver(`msg_${randomUUID()}`, message('pending', new Date(Date.now() - 60_000)));
    }
  }

  /** POSTs one signed message, retrying with backoff while galang's endpoint fails. */
  private async deliver(id: string, body: string): Promise<void> {
    const attempts = this.options.maxDeliveryAttempts ?? 10;
    for (let attempt = 0; attempt < attempts && !this.closed; attempt++) {
      const timestamp = Math.floor(Date.now() / 1000);
      try {
        const response = await fetch(this.webhookUrl, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'webhook-id': id,
            'webhook-timestamp': String(timestamp),
            'webhook-signature': signStandardWebhook(
              this.options.webhookSecret,
              id,
              timestamp,
              body,
            ),
          },
          body,
          signal: AbortSignal.timeout(5_000),
        });
        if (response.ok) return;
      } catch {
        // Our endpoint is down or slow: back off and deliver again, like a real gateway.
      }
      await this.sleep(Math.min(200 * 2 ** attempt, 5_000));
    }
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
