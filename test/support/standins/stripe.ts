import { Faults, startLoopback } from './loopback';
import type { Route, StandinRequest, StandinResponse } from './loopback';
import { Notifier } from './notifier';
import {
  fingerprint,
  id,
  page,
  stripeError,
  stripeStandinSignature,
  unflatten,
  unix,
} from './stripe-objects';
import type { Charge, Dispute, Intent, Refund } from './stripe-objects';

/**
 * Stripe's PaymentIntents, Refunds and Disputes as docs.stripe.com describes them: form bodies,
 * `{error: {type, code, message}}` errors, Idempotency-Key replay for 24 hours (parameters must
 * match; docs.stripe.com/idempotency), lists newest first with `has_more`, and events signed
 * per endpoint. The endpoint's API version decides the refund events: from 2024-10-28.acacia
 * refund.created/updated/failed for every refund (changelog "Adds created, updated, and failed
 * events for all refund types"); before it a refund of a charge sends only charge.refunded
 * (and charge.refund.updated on a change). Failed deliveries are retried with exponential
 * backoff for up to three days (docs.stripe.com/webhooks#retries).
 */
export const REFUND_EVENTS_FROM = '2024-10-28';
const DAY = 86_400_000;

export interface StripeEndpoint {
  url: string;
  secret: string;
  /** The endpoint's own version, as set in the Dashboard (not the client's pin). */
  apiVersion: string;
}

export interface StripeStandinOptions {
  secretKey: string;
  endpoints: StripeEndpoint[];
  timeScale?: number;
  /** Where a new refund starts: card refunds usually succeed at once. */
  refundsStartAs?: Refund['status'];
}

/** Exponential backoff (1 h doubling) while the first attempt is less than three days old. */
export const stripeRetryDelayMs = (attempt: number) => {
  const waited = (2 ** attempt - 1) * 3_600_000;
  return waited < 3 * DAY ? 2 ** (attempt - 1) * 3_600_000 : undefined;
};

export async function startStripeStandin(options: StripeStandinOptions) {
  const intents = new Map<string, Intent>();
  const charges = new Map<string, Charge>();
  const refunds: Refund[] = [];
  const disputes: Dispute[] = [];
  const keys = new Map<string, { fp: string; at: number; answer: StandinResponse }>();
  let clockOffset = 0;
  const faults = new Faults();
  const notifiers = options.endpoints.map((endpoint) => ({
    endpoint,
    notifier: new Notifier({
      url: endpoint.url,
      timeScale: options.timeScale,
      retryDelayMs: stripeRetryDelayMs,
    }),
  }));

  const emit = (type: string, object: object, only?: (version: string) => boolean) => {
    for (const { endpoint, notifier } of notifiers) {
      if (only && !only(endpoint.apiVersion)) continue;
      const event = {
        id: id('evt'),
        object: 'event',
        api_version: endpoint.apiVersion,
        created: unix(),
        data: { object: structuredClone(object) },
        livemode: false,
        pending_webhooks: 1,
        request: { id: null, idempotency_key: null },
        type,
      };
      const payload = JSON.stringify(event);
      // Each attempt is signed afresh, so its timestamp is the attempt's.
      notifier.notify(payload, () => ({
        'content-type': 'application/json; charset=utf-8',
        'stripe-signature': stripeStandinSignature(endpoint.secret, unix(), payload),
      }));
    }
  };
  const current = (v: string) => v.slice(0, 10) >= REFUND_EVENTS_FROM;
  const older = (v: string) => !current(v);

  const missing = (what: string, value: string) =>
    stripeError(404, 'invalid_request_error', `No such ${what}: '${value}'`, {
      code: 'resource_missing',
    });
  const intentOr404 = (value: string) => intents.get(value);
  const chargeOf = (intent: Intent) =>
    intent.latest_charge ? charges.get(intent.latest_charge) : undefined;

  const createIntent = (form: Record<string, unknown>): StandinResponse => {
    const p = unflatten(form);
    const amount = Number(p.amount);
    if (!Number.isSafeInteger(amount) || amount < 1) {
      return stripeError(400, 'invalid_request_error', 'Invalid integer: amount', {
        param: 'amount',
      });
    }
    const intentId = id('pi');
    const intent: Intent = {
      id: intentId,
      object: 'payment_intent',
      amount,
      amount_received: 0,
      currency: typeof p.currency === 'string' ? p.currency.toLowerCase() : '',
      status: 'requires_payment_method',
      description: typeof p.description === 'string' ? p.description : null,
      metadata: (p.metadata ?? {}) as Record<string, string>,
      client_secret: `${intentId}_secret_${id('s')}`,
      latest_charge: null,
      created: unix(),
      livemode: false,
      ...(p.allowed_payment_method_types
        ? {
            allowed_payment_method_types: Object.values(p.allowed_payment_method_types) as string[],
          }
        : {}),
    };
    intents.set(intent.id, intent);
    return { status: 200, body: intent };
  };

  const cancelIntent = (intentId: string): StandinResponse => {
    const intent = intentOr404(intentId);
    if (!intent) return missing('payment_intent', intentId);
    const cancelable = [
      'requires_payment_method',
      'requires_capture',
      'requires_confirmation',
      'requires_action',
    ];
    if (!cancelable.includes(intent.status)) {
      return stripeError(
        400,
        'invalid_request_error',
        `You cannot cancel this PaymentIntent because it has a status of ${intent.status}.`,
        { code: 'payment_intent_unexpected_state' },
      );
    }
    intent.status = 'canceled';
    emit('payment_intent.canceled', intent);
    return { status: 200, body: intent };
  };

  const makeRefund = (
    intent: Intent,
    amount: number | undefined,
    metadata: Record<string, string>,
  ): StandinResponse => {
    const charge = chargeOf(intent);
    if (!charge || intent.status !== 'succeeded') {
      return stripeError(
        400,
        'invalid_request_error',
        'This PaymentIntent does not have a successful charge to refund.',
      );
    }
    const left = charge.amount - charge.amount_refunded;
    if (left === 0)
      return stripeError(
        400,
        'invalid_request_error',
        `Charge ${charge.id} has already been refunded.`,
        { code: 'charge_already_refunded' },
      );
    const value = amount ?? left;
    if (!Number.isSafeInteger(value) || value < 1 || value > left) {
      return stripeError(
        400,
        'invalid_request_error',
        `Refund amount is greater than unrefunded amount on charge (${left}).`,
        { param: 'amount' },
      );
    }
    const refund: Refund = {
      id: id('re'),
      object: 'refund',
      amount: value,
      charge: charge.id,
      payment_intent: intent.id,
      currency: intent.currency,
      status: options.refundsStartAs ?? 'succeeded',
      reason: 'requested_by_customer',
      metadata,
      created: unix(),
    };
    refunds.push(refund);
    charge.amount_refunded += value;
    charge.refunded = charge.amount_refunded === charge.amount;
    emit('refund.created', refund, current);
    emit('charge.refunded', charge);
    return { status: 200, body: refund };
  };

  const createRefund = (form: Record<string, unknown>): StandinResponse => {
    const p = unflatten(form);
    const intentId =
      typeof p.payment_intent === 'string'
        ? p.payment_intent
        : [...intents.values()].find((i) => i.latest_charge === p.charge)?.id;
    const intent = intentId ? intents.get(intentId) : undefined;
    if (!intent) return missing('payment_intent', String(p.payment_intent ?? p.charge));
    return makeRefund(
      intent,
      p.amount === undefined ? undefined : Number(p.amount),
      (p.metadata ?? {}) as Record<string, string>,
    );
  };

  /** Idempotency-Key on POSTs: saved after the endpoint runs (5xx too), replayed for 24 hours. */
  const idempotent = (req: StandinRequest, run: () => StandinResponse): StandinResponse => {
    const key = req.headers['idempotency-key'];
    if (typeof key !== 'string') return run();
    const fp = fingerprint(req.url.pathname, req.body);
    const now = Date.now() + clockOffset;
    const saved = keys.get(key);
    if (saved && now - saved.at < DAY) {
      if (saved.fp !== fp) {
        return stripeError(
          400,
          'idempotency_error',
          `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
        );
      }
      return {
        ...saved.answer,
        headers: { ...saved.answer.headers, 'idempotent-replayed': 'true' },
      };
    }
    const answer = run();
    keys.set(key, { fp, at: now, answer });
    return answer;
  };

  const list = <T extends { id: string; payment_intent: string; charge: string }>(
    all: T[],
    req: StandinRequest,
    url: string,
  ) => {
    const q = req.url.searchParams;
    const filtered = all.filter(
      (x) =>
        (!q.get('payment_intent') || x.payment_intent === q.get('payment_intent')) &&
        (!q.get('charge') || x.charge === q.get('charge')),
    );
    return { status: 200, body: page(filtered, q, url) };
  };

  const routes: Route[] = [
    {
      method: 'POST',
      path: /^\/v1\/payment_intents$/,
      handle: (req) => idempotent(req, () => createIntent(req.body)),
    },
    {
      method: 'GET',
      path: /^\/v1\/payment_intents\/([^/]+)$/,
      handle: (_r, [pi = '']) => {
        const i = intents.get(pi);
        return i ? { status: 200, body: i } : missing('payment_intent', pi);
      },
    },
    {
      method: 'POST',
      path: /^\/v1\/payment_intents\/([^/]+)\/cancel$/,
      handle: (req, [pi = '']) => idempotent(req, () => cancelIntent(pi)),
    },
    {
      method: 'POST',
      path: /^\/v1\/refunds$/,
      handle: (req) => idempotent(req, () => createRefund(req.body)),
    },
    { method: 'GET', path: /^\/v1\/refunds$/, handle: (req) => list(refunds, req, '/v1/refunds') },
    {
      method: 'GET',
      path: /^\/v1\/refunds\/([^/]+)$/,
      handle: (_r, [re = '']) => {
        const r = refunds.find((x) => x.id === re);
        return r ? { status: 200, body: r } : missing('refund', re);
      },
    },
    {
      method: 'GET',
      path: /^\/v1\/disputes$/,
      handle: (req) => list(disputes, req, '/v1/disputes'),
    },
    {
      method: 'GET',
      path: /^\/v1\/disputes\/([^/]+)$/,
      handle: (_r, [dp = '']) => {
        const d = disputes.find((x) => x.id === dp);
        return d ? { status: 200, body: d } : missing('dispute', dp);
      },
    },
  ];
  const authed = routes.map((r) => ({
    ...r,
    handle: (req: StandinRequest, p: string[]) =>
      req.headers.authorization === `Bearer ${options.secretKey}`
        ? r.handle(req, p)
        : stripeError(401, 'invalid_request_error', 'Invalid API Key provided.'),
  }));
  const loopback = await startLoopback({
    routes: authed,
    faults,
    notFound: () => stripeError(404, 'invalid_request_error', 'Unrecognized request URL.'),
    faultBody: (status) =>
      status === 429
        ? {
            error: {
              type: 'invalid_request_error',
              code: 'rate_limit',
              message: 'Too many requests.',
            },
          }
        : { error: { type: 'api_error', message: 'stand-in fault' } },
  });

  const must = (intentId: string) => {
    const intent = intents.get(intentId);
    if (!intent) throw new Error(`no PaymentIntent ${intentId}`);
    return intent;
  };
  const mustRefund = (refundId: string) => {
    const refund = refunds.find((r) => r.id === refundId);
    if (!refund) throw new Error(`no refund ${refundId}`);
    return refund;
  };
  const setRefund = (refundId: string, status: 'succeeded' | 'failed') => {
    const refund = mustRefund(refundId);
    const charge = charges.get(refund.charge);
    if (status === 'failed' && refund.status !== 'failed' && charge) {
      charge.amount_refunded -= refund.amount; // The money came back to the balance.
      charge.refunded = false;
    }
    refund.status = status;
    emit('refund.updated', refund, current);
    if (status === 'failed') emit('refund.failed', refund, current);
    emit('charge.refund.updated', refund, older);
    return refund;
  };
  const dispute = (disputeId: string) => {
    const d = disputes.find((x) => x.id === disputeId);
    if (!d) throw new Error(`no dispute ${disputeId}`);
    return d;
  };

  return {
    url: loopback.url,
    port: loopback.port,
    calls: loopback.calls,
    faults,
    notifiers: notifiers.map((n) => n.notifier),
    intent: (intentId: string) => intents.get(intentId),
    pay: (intentId: string) => {
      const intent = must(intentId);
      const charge: Charge = {
        id: id('ch'),
        object: 'charge',
        amount: intent.amount,
        amount_refunded: 0,
        refunded: false,
        disputed: false,
        currency: intent.currency,
        payment_intent: intent.id,
        status: 'succeeded',
        created: unix(),
      };
      charges.set(charge.id, charge);
      Object.assign(intent, {
        status: 'succeeded',
        amount_received: intent.amount,
        latest_charge: charge.id,
      });
      emit('charge.succeeded', charge);
      emit('payment_intent.succeeded', intent);
      return intent;
    },
    /** A failed attempt: not final, the intent waits for another payment method. */
    failAttempt: (intentId: string) => {
      emit(
        'payment_intent.payment_failed',
        Object.assign(must(intentId), { status: 'requires_payment_method' }),
      );
    },
    processing: (intentId: string) => {
      emit('payment_intent.processing', Object.assign(must(intentId), { status: 'processing' }));
    },
    /** A refund made in the Dashboard: no Idempotency-Key, no galang call. */
    dashboardRefund: (intentId: string, amount?: number) => {
      const answer = makeRefund(must(intentId), amount, {});
      if (answer.status !== 200) throw new Error(JSON.stringify(answer.body));
      return answer.body as Refund;
    },
    settleRefund: (refundId: string) => setRefund(refundId, 'succeeded'),
    failRefund: (refundId: string) => setRefund(refundId, 'failed'),
    openDispute: (intentId: string, amount?: number) => {
      const charge = chargeOf(must(intentId));
      if (!charge) throw new Error('nothing to dispute');
      const d: Dispute = {
        id: id('dp'),
        object: 'dispute',
        amount: amount ?? charge.amount,
        charge: charge.id,
        payment_intent: intentId,
        currency: charge.currency,
        status: 'needs_response',
        reason: 'fraudulent',
        created: unix(),
      };
      disputes.push(d);
      charge.disputed = true;
      emit('charge.dispute.created', d);
      emit('charge.dispute.funds_withdrawn', d);
      return d;
    },
    winDispute: (disputeId: string) => {
      const d = Object.assign(dispute(disputeId), { status: 'won' as const });
      emit('charge.dispute.funds_reinstated', d);
      emit('charge.dispute.closed', d);
    },
    loseDispute: (disputeId: string) => {
      emit('charge.dispute.closed', Object.assign(dispute(disputeId), { status: 'lost' as const }));
    },
    /** Moves the idempotency layer's clock: keys older than 24 hours may be pruned. */
    advanceClock: (ms: number) => (clockOffset += ms),
    close: async () => {
      for (const { notifier } of notifiers) notifier.close();
      await loopback.close();
    },
  };
}

export type StripeStandin = Awaited<ReturnType<typeof startStripeStandin>>;
