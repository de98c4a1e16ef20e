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
import type { Refund } from './stripe-objects';
import { createStripeCards } from './stripe-cards';
import { createStripeLedger } from './stripe-ledger';

export { REFUND_EVENTS_FROM } from './stripe-ledger';

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
  const cards = createStripeCards();
  const ledger = createStripeLedger(emit, cards, options.refundsStartAs);
  const { intents, refunds, disputes, createIntent, cancelIntent, createRefund } = ledger;
  const missing = (what: string, value: string) =>
    stripeError(404, 'invalid_request_error', `No such ${what}: '${value}'`, {
      code: 'resource_missing',
    });
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
      path: /^\/v1\/customers$/,
      handle: (req) => idempotent(req, () => cards.createCustomer(unflatten(req.body))),
    },
    {
      method: 'DELETE',
      path: /^\/v1\/customers\/([^/]+)$/,
      handle: (_r, [customer = '']) => cards.deleteCustomer(customer),
    },
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

  return {
    ...ledger,
    /** How a saved card answers its next off-session charge. */
    setCard: cards.setCard,
    queueCard: cards.queueCard,
    customerDeleted: cards.customerDeleted,
    url: loopback.url,
    port: loopback.port,
    calls: loopback.calls,
    faults,
    notifiers: notifiers.map((n) => n.notifier),
    /** Moves the idempotency layer's clock: keys older than 24 hours may be pruned. */
    advanceClock: (ms: number) => (clockOffset += ms),
    close: async () => {
      for (const { notifier } of notifiers) notifier.close();
      await loopback.close();
    },
  };
}

export type StripeStandin = Awaited<ReturnType<typeof startStripeStandin>>;
