import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import formbody from '@fastify/formbody';
import Stripe from 'stripe';
import type { FakeGateway } from './fake-gateway';
import { listenFake } from './fake-gateway';

type Json = Record<string, unknown>;

/** An injected answer for the next request(s) whose path starts with `path`. */
export interface StripeFault {
  path: string;
  status: number;
  code?: string;
  type?: string;
  /** The `Stripe-Should-Retry` header, as Stripe sends it on some errors. */
  shouldRetry?: 'true' | 'false';
}

export interface FakeStripe extends FakeGateway {
  /** The `Stripe-Version` of every request received. */
  apiVersions: Set<string>;
  /** Every event the fake's changes produced, newest last, as Stripe would deliver them. */
  events: Stripe.Event[];
  /** Signs an event's JSON with `secret` the way Stripe does (`Stripe-Signature`). */
  signed(event: Stripe.Event, secret: string, timestamp?: number): { body: Buffer; header: string };
  /** Answers the next matching request with this error instead (once per call). */
  fault(fault: StripeFault): void;
  /** New refunds start in this status (card refunds usually succeed at once). */
  refundStartsAs: 'succeeded' | 'pending';
  settleRefund(refundId: string, status: 'succeeded' | 'failed'): void;
  /** Opens a dispute on a succeeded intent; `inquiry` opens a warning_needs_response one. */
  openDispute(intentId: string, options?: { amount?: number; inquiry?: boolean }): string;
  closeDispute(disputeId: string, status: 'won' | 'lost'): void;
}

const CANCELABLE = new Set([
  'requires_payment_method',
  'requires_capture',
  'requires_confirmation',
  'requires_action',
]);

/**
 * Stripe's v1 API as stripe-node speaks it (form-encoded bodies, `Idempotency-Key`, list
 * objects, `{error:{type,code}}` answers), with the documented behaviour galang relies on:
 * keys replay the first answer and refuse other parameters; a `processing` or `succeeded`
 * intent cannot be canceled (`payment_intent_unexpected_state`); refunds may be pending, fail,
 * or fail after succeeding; disputes open, then are won or lost. Each change records the event
 * Stripe would send.
 */
export async function fakeStripe(secretKey: string): Promise<FakeStripe> {
  const app = Fastify();
  await app.register(formbody);
  const intents = new Map<string, Json>();
  const refundsById = new Map<string, Json>();
  const disputes = new Map<string, Json>();
  const saved = new Map<string, { params: string; status: number; body: unknown }>();
  const charges = new Map<string, number>();
  const refunds = new Map<string, number>();
  const faults: StripeFault[] = [];
  const events: Stripe.Event[] = [];
  const apiVersions = new Set<string>();
  const now = () => Math.floor(Date.now() / 1000);
  const emit = (type: string, object: Json) => {
    events.push({
      id: `evt_${randomUUID().replace(/-/g, '')}`,
      object: 'event',
      api_version: '2026-10-28.endive',
      created: now(),
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
      data: { object: structuredClone(object) },
    } as unknown as Stripe.Event);
  };
  const error = (
    reply: FastifyReply,
    status: number,
    code: string,
    message: string,
    extra: object = {},
  ) =>
    reply.code(status).send({
      error: { type: 'invalid_request_error', code, message, ...extra },
    });

  app.addHook('onRequest', async (request, reply) => {
    apiVersions.add(String(request.headers['stripe-version']));
    if (request.headers.authorization !== `Bearer ${secretKey}`) {
      return reply.code(401).send({ error: { type: 'invalid_request_error', message: 'bad key' } });
    }
    const index = faults.findIndex((f) => request.url.startsWith(f.path));
    const fault = index >= 0 ? faults.splice(index, 1)[0] : undefined;
    if (fault) {
      if (fault.shouldRetry) void reply.header('stripe-should-retry', fault.shouldRetry);
      return reply.code(fault.status).send({
        error: { type: fault.type ?? 'api_error', code: fault.code, message: 'injected' },
      });
    }
  });

  /** Stripe's idempotency: the first answer under a key is replayed; other params are refused. */
  const idempotent = async (
    request: FastifyRequest,
    reply: FastifyReply,
    counter: Map<string, number>,
    run: () => { status: number; body: unknown },
  ) => {
    const key = request.headers['idempotency-key'];
    const params = JSON.stringify(request.body ?? {});
    if (typeof key !== 'string') return reply.code(400).send({ error: { message: 'no key' } });
    const previous = saved.get(key);
    if (previous) {
      if (previous.params !== params) {
        return reply.code(400).send({
          error: {
            type: 'idempotency_error',
            message: 'Keys for idempotent requests can only be used with the same parameters',
          },
        });
      }
      return reply.code(previous.status).header('idempotent-replayed', 'true').send(previous.body);
    }
    const result = run();
    // Results are saved only once the endpoint ran; a refused validation is not kept.
    if (result.status < 400) {
      saved.set(key, { params, ...result });
      counter.set(key, (counter.get(key) ?? 0) + 1);
    }
    return reply.code(result.status).send(result.body);
  };

  app.post('/v1/payment_intents', (request, reply) =>
    idempotent(request, reply, charges, () => {
      const form = request.body as Record<string, string>;
      const id = `pi_${randomUUID().replace(/-/g, '')}`;
      const intent = {
        id,
        object: 'payment_intent',
        amount: Number(form.amount),
        amount_received: 0,
        currency: form.currency,
        status: 'requires_payment_method',
        client_secret: `${id}_secret_fake`,
        created: now(),
        metadata: { donation_id: form['metadata[donation_id]'] },
        allowed_payment_method_types: [form['allowed_payment_method_types[0]']],
      };
      intents.set(id, intent);
      emit('payment_intent.created', intent);
      return { status: 200, body: intent };
    }),
  );

  const missing = (reply: FastifyReply, what: string) =>
    error(reply, 404, 'resource_missing', `No such ${what}`);

  app.get<{ Params: { id: string } }>(
    '/v1/payment_intents/:id',
    async (request, reply) => intents.get(request.params.id) ?? missing(reply, 'payment_intent'),
  );

  app.post<{ Params: { id: string } }>('/v1/payment_intents/:id/cancel', async (request, reply) => {
    const intent = intents.get(request.params.id);
    if (!intent) return missing(reply, 'payment_intent');
    if (!CANCELABLE.has(String(intent.status))) {
      return error(
        reply,
        400,
        'payment_intent_unexpected_state',
        `You cannot cancel this PaymentIntent because it has a status of ${String(intent.status)}.`,
        { payment_intent: intent },
      );
    }
    intent.status = 'canceled';
    emit('payment_intent.canceled', intent);
    return intent;
  });

  const refundedSoFar = (intentId: string) =>
    [...refundsById.values()]
      .filter(
        (r) => r.payment_intent === intentId && r.status !== 'failed' && r.status !== 'canceled',
      )
      .reduce((sum, r) => sum + Number(r.amount), 0);

  const refusal = (status: number, code: string, message: string) => ({
    status,
    body: { error: { type: 'invalid_request_error', code, message } },
  });
  app.post('/v1/refunds', (request, reply) =>
    idempotent(request, reply, refunds, () => {
      const form = request.body as Record<string, string>;
      const intent = intents.get(form.payment_intent ?? '');
      if (!intent) return refusal(404, 'resource_missing', 'No such payment_intent');
      if (intent.status !== 'succeeded') {
        return refusal(400, 'payment_intent_unexpected_state', 'No successful charge to refund.');
      }
      const left = Number(intent.amount_received) - refundedSoFar(String(intent.id));
      const amount = form.amount === undefined ? left : Number(form.amount);
      if (left <= 0) return refusal(400, 'charge_already_refunded', 'Charge already refunded.');
      if (amount > left) return refusal(400, 'amount_too_large', 'Amount exceeds the unrefunded.');
      const refund = {
        id: `re_${randomUUID().replace(/-/g, '')}`,
        object: 'refund',
        amount,
        currency: intent.currency,
        payment_intent: intent.id,
        charge: `ch_${String(intent.id).slice(3)}`,
        status: fake.refundStartsAs,
        reason: form.reason ?? null,
        created: now(),
        metadata: {},
      };
      refundsById.set(refund.id, refund);
      emit('refund.created', refund);
      // charge.refunded carries only the cumulative amount; its refunds list is not included.
      emit('charge.refunded', {
        id: refund.charge,
        object: 'charge',
        amount: intent.amount,
        amount_refunded: refundedSoFar(String(intent.id)),
        currency: intent.currency,
        payment_intent: intent.id,
      });
      return { status: 200, body: refund };
    }),
  );

  const list = (url: string, data: Json[]) => ({ object: 'list', data, has_more: false, url });
  app.get<{ Querystring: { payment_intent?: string } }>('/v1/refunds', async (request) =>
    list(
      '/v1/refunds',
      [...refundsById.values()].filter((r) => r.payment_intent === request.query.payment_intent),
    ),
  );
  app.get<{ Querystring: { payment_intent?: string } }>('/v1/disputes', async (request) =>
    list(
      '/v1/disputes',
      [...disputes.values()].filter((d) => d.payment_intent === request.query.payment_intent),
    ),
  );

  const webhooks = new Stripe('sk_test_signing_only').webhooks;
  const fake: FakeStripe = {
    ...(await listenFake(app)),
    charges,
    refunds,
    events,
    apiVersions,
    refundStartsAs: 'succeeded',
    set(id, status) {
      const intent = intents.get(id);
      if (!intent) throw new Error(`no intent ${id}`);
      intent.status = status;
      if (status === 'succeeded') intent.amount_received = intent.amount;
      const type = {
        succeeded: 'payment_intent.succeeded',
        processing: 'payment_intent.processing',
        canceled: 'payment_intent.canceled',
        requires_payment_method: 'payment_intent.payment_failed',
      }[status];
      if (type) emit(type, intent);
    },
    signed(event, secret, timestamp = now()) {
      const payload = JSON.stringify(event);
      return {
        body: Buffer.from(payload),
        header: webhooks.generateTestHeaderString({ payload, secret, timestamp }),
      };
    },
    fault(f) {
      faults.push(f);
    },
    settleRefund(refundId, status) {
      const refund = refundsById.get(refundId);
      if (!refund) throw new Error(`no refund ${refundId}`);
      refund.status = status;
      emit(status === 'failed' ? 'refund.failed' : 'refund.updated', refund);
    },
    openDispute(intentId, options = {}) {
      const intent = intents.get(intentId);
      if (intent?.status !== 'succeeded')
        throw new Error('only a succeeded intent can be disputed');
      const dispute = {
        id: `dp_${randomUUID().replace(/-/g, '')}`,
        object: 'dispute',
        amount: options.amount ?? intent.amount_received,
        currency: intent.currency,
        payment_intent: intent.id,
        charge: `ch_${String(intent.id).slice(3)}`,
        status: options.inquiry ? 'warning_needs_response' : 'needs_response',
        created: now(),
        balance_transactions: [],
      };
      disputes.set(dispute.id, dispute);
      emit('charge.dispute.created', dispute);
      if (!options.inquiry) emit('charge.dispute.funds_withdrawn', dispute);
      return dispute.id;
    },
    closeDispute(disputeId, status) {
      const dispute = disputes.get(disputeId);
      if (!dispute) throw new Error(`no dispute ${disputeId}`);
      dispute.status = status;
      if (status === 'won') emit('charge.dispute.funds_reinstated', dispute);
      emit('charge.dispute.closed', dispute);
    },
  };
  return fake;
}
