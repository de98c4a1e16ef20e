import { createHash, timingSafeEqual } from 'node:crypto';
import { WebhookRejected } from '../payment-provider';
import type { WebhookEvent, WebhookHeaders } from '../payment-provider';
import { fromXenditAmount, invoiceStatuses, refundStatus } from './xendit-protocol';

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/**
 * Xendit authenticates callbacks with the static `x-callback-token` of the account, not a
 * signature: compared by hash (equal lengths, constant time) with every token of the rotation.
 */
export function verifyCallbackToken(headers: WebhookHeaders, tokens: readonly string[]): void {
  const header = headers['x-callback-token'];
  const offered = typeof header === 'string' ? header : undefined;
  if (!offered) throw new WebhookRejected('signature', 'missing x-callback-token');
  const hash = digest(offered);
  if (!tokens.some((token) => timingSafeEqual(hash, digest(token)))) {
    throw new WebhookRejected('signature', 'x-callback-token does not match');
  }
}

type Json = Record<string, unknown>;
const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : undefined);
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null;

/**
 * A refund webhook (`refund.succeeded` / `refund.failed`, docs: Refund webhook notification):
 * `{event, business_id, created, data: refund}`. The documented example nests the envelope once
 * more inside `data`; both shapes are read.
 */
function refundEvent(body: Json): WebhookEvent {
  let data = isObject(body.data) ? body.data : {};
  if (isObject(data.data) && str(data.event)) data = data.data;
  const id = str(data.id);
  const currency = str(data.currency) ?? '';
  const amount = fromXenditAmount(data.amount, currency);
  const providerReference =
    str(data.invoice_id) ?? str(data.payment_request_id) ?? str(data.payment_id);
  if (!id || !providerReference || amount === undefined) {
    throw new WebhookRejected('malformed', 'not a Xendit refund webhook');
  }
  const status =
    body.event === 'refund.failed' ? 'FAILED' : refundStatus(str(data.status) ?? 'SUCCEEDED');
  return {
    kind: 'refund',
    eventKey: `${id}:${status}`,
    refundId: id,
    status,
    providerReference,
    donationRef: undefined,
    amount,
    currency,
    occurredAt: str(data.updated) ?? str(body.created) ?? new Date().toISOString(),
  };
}

/** An invoice callback (xendit-node InvoiceCallback): amounts in major units, decimals allowed. */
function invoiceEvent(body: Json): WebhookEvent {
  const id = str(body.id);
  const externalId = str(body.external_id);
  const currency = str(body.currency) ?? '';
  const rawStatus = str(body.status) ?? '';
  const amount = fromXenditAmount(body.paid_amount ?? body.amount, currency);
  if (!id || !externalId || amount === undefined) {
    throw new WebhookRejected('malformed', 'not a Xendit invoice callback');
  }
  const status = invoiceStatuses[rawStatus];
  const eventKey = `${id}:${rawStatus}`;
  if (!status) return { kind: 'ignored', eventKey, reason: `invoice status ${rawStatus}` };
  return {
    kind: 'payment',
    eventKey,
    status,
    providerReference: id,
    donationRef: externalId,
    amount,
    currency,
    occurredAt: str(body.paid_at) ?? str(body.updated) ?? new Date().toISOString(),
  };
}

/**
 * A dispute webhook (apidocs/dispute-webhook-notifications.md): `{event: dispute.*, id, status,
 * currency, amount: {initial, terminal}, payment_id, reference_id}`. It names a Payments API
 * payment (`py-…`); the docs tie no invoice id to it, so it cannot reach the invoice galang
 * stores. Recorded for an operator with what it says, never dropped in silence.
 */
function disputeEvent(body: Json, event: string): WebhookEvent {
  const id = str(body.id) ?? '?';
  const amount = isObject(body.amount) ? body.amount : {};
  const money = [str(amount.initial), str(amount.terminal)].filter(Boolean).join('→');
  const parts = [
    `Xendit dispute ${id} ${str(body.status) ?? '?'} (${event})`,
    `${str(body.currency) ?? '?'} ${money || '?'}`,
    `on payment ${str(body.payment_id) ?? '?'} (reference ${str(body.reference_id) ?? '?'})`,
  ];
  return {
    kind: 'ignored',
    // One key per state change; Xendit's retries of one notification share `updated_at`.
    eventKey: `${event}:${id}:${str(body.updated_at) ?? ''}`,
    reason: `needs-review: ${parts.join(' ')}: the docs bind no invoice id to it`,
    needsReview: true,
  };
}

/**
 * A verified Xendit callback, normalized. Every event is a hint (no signature over the body):
 * the workflow confirms it with the API first. Disputes are recorded as `needs-review:`;
 * other products' webhooks (payouts…) are recorded and ignored.
 */
export function parseXenditCallback(
  rawBody: Buffer,
  headers: WebhookHeaders,
  tokens: readonly string[],
): WebhookEvent {
  verifyCallbackToken(headers, tokens);
  let body: unknown;
  try {
    body = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new WebhookRejected('malformed', 'body is not JSON');
  }
  if (!isObject(body)) throw new WebhookRejected('malformed', 'not an object');
  const event = str(body.event);
  if (event === 'refund.succeeded' || event === 'refund.failed') return refundEvent(body);
  if (event?.startsWith('dispute.')) return disputeEvent(body, event);
  if (event) {
    const key = `${event}:${str(body.id) ?? str(body.created) ?? ''}`;
    return { kind: 'ignored', eventKey: key, reason: `event ${event}` };
  }
  return invoiceEvent(body);
}
