import { createHash, createHmac, randomBytes } from 'node:crypto';

/**
 * Stripe's objects as the stand-in keeps them (docs.stripe.com/api: PaymentIntent, Charge,
 * Refund, Dispute, Event), and its own `Stripe-Signature`: `t=<unix>,v1=<hex HMAC-SHA256 of
 * "<t>.<payload>" keyed by the endpoint secret>` (docs.stripe.com/webhooks/signature).
 */
export const id = (prefix: string) => `${prefix}_${randomBytes(12).toString('hex')}`;
export const unix = () => Math.floor(Date.now() / 1000);

export function stripeStandinSignature(secret: string, timestamp: number, payload: string): string {
  const mac = createHmac('sha256', secret).update(`${timestamp}.${payload}`).digest('hex');
  return `t=${timestamp},v1=${mac}`;
}

export interface Intent {
  id: string;
  object: 'payment_intent';
  amount: number;
  amount_received: number;
  currency: string;
  status: string;
  description: string | null;
  metadata: Record<string, string>;
  client_secret: string;
  latest_charge: string | null;
  created: number;
  livemode: false;
  allowed_payment_method_types?: string[];
  /** The Customer its card is saved on, and whether it saves the card it is paid with. */
  customer?: string | null;
  setup_future_usage?: 'off_session' | null;
  /** The card it was paid (or is charged) with. */
  payment_method?: string | null;
  last_payment_error?: Record<string, unknown> | null;
}

export interface Charge {
  id: string;
  object: 'charge';
  amount: number;
  amount_refunded: number;
  refunded: boolean;
  disputed: boolean;
  currency: string;
  payment_intent: string;
  status: 'succeeded';
  created: number;
}

export interface Refund {
  id: string;
  object: 'refund';
  amount: number;
  charge: string;
  payment_intent: string;
  currency: string;
  status: 'pending' | 'succeeded' | 'failed' | 'canceled' | 'requires_action';
  reason: string | null;
  metadata: Record<string, string>;
  created: number;
}

export interface Dispute {
  id: string;
  object: 'dispute';
  amount: number;
  charge: string;
  payment_intent: string;
  currency: string;
  status: 'needs_response' | 'under_review' | 'won' | 'lost' | 'warning_needs_response';
  reason: string;
  created: number;
}

/** Form keys as stripe-node sends them (`metadata[donation_id]`, `a[0]`) → nested values. */
export function unflatten(form: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(form)) {
    const parts = key.split(/\[|\]\[|\]/).filter((p) => p !== '');
    let node: Record<string, unknown> = out;
    parts.forEach((part, i) => {
      if (i === parts.length - 1) node[part] = value;
      else node = (node[part] ??= {}) as Record<string, unknown>;
    });
  }
  return out;
}

/** The request's parameters, order-independent, for the idempotency layer's comparison. */
export function fingerprint(path: string, form: Record<string, unknown>): string {
  const sorted = Object.keys(form)
    .sort()
    .map((k) => [k, form[k]]);
  return createHash('sha256').update(path).update(JSON.stringify(sorted)).digest('hex');
}

/** A Stripe list page: newest first, `starting_after` / `ending_before` cursors, `has_more`. */
export function page<T extends { id: string }>(
  all: T[],
  query: URLSearchParams,
  url: string,
): { object: 'list'; data: T[]; has_more: boolean; url: string } {
  const limit = Math.min(Math.max(Number(query.get('limit') ?? 10) || 10, 1), 100);
  const newest = [...all].reverse();
  const after = query.get('starting_after');
  const before = query.get('ending_before');
  let start = 0;
  let items = newest;
  if (after) start = newest.findIndex((x) => x.id === after) + 1;
  if (before) {
    const end = newest.findIndex((x) => x.id === before);
    items = newest.slice(Math.max(0, end - limit), Math.max(0, end));
    return { object: 'list', data: items, has_more: end - limit > 0, url };
  }
  const data = newest.slice(start, start + limit);
  return { object: 'list', data, has_more: start + limit < newest.length, url };
}

export const stripeError = (
  status: number,
  type: string,
  message: string,
  extra: Record<string, unknown> = {},
) => ({
  status,
  body: { error: { type, message, ...extra } },
  headers: { 'request-id': id('req') },
});
