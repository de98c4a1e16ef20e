import { id, stripeError, unflatten, unix } from './stripe-objects';
import type { Charge, Dispute, Intent, Refund } from './stripe-objects';
import type { StandinResponse } from './loopback';
import type { StripeCards } from './stripe-cards';

/** The version from which refund.created/updated/failed are sent for every refund. */
export const REFUND_EVENTS_FROM = '2024-10-28';

export type Emit = (type: string, object: object, only?: (version: string) => boolean) => void;

/**
 * The stand-in's Stripe account: PaymentIntents, their charges, refunds and disputes, with the
 * events each change sends (docs.stripe.com/api/events/types). HTTP and idempotency live in
 * stripe.ts; this module is the money and its lifecycle.
 */
export function createStripeLedger(
  emit: Emit,
  cards: StripeCards,
  refundsStartAs: Refund['status'] = 'succeeded',
) {
  const intents = new Map<string, Intent>();
  const charges = new Map<string, Charge>();
  const refunds: Refund[] = [];
  const disputes: Dispute[] = [];
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
    const customer = typeof p.customer === 'string' ? p.customer : undefined;
    if (customer !== undefined && !cards.customers.has(customer)) {
      return missing('customer', customer);
    }
    const offSession = p.off_session === 'true' && p.confirm === 'true';
    const checked = offSession ? cards.offSessionState(customer, p.payment_method) : undefined;
    if (checked && 'refused' in checked) return checked.refused;
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
      customer: customer ?? null,
      setup_future_usage: p.setup_future_usage === 'off_session' ? 'off_session' : null,
      payment_method: typeof p.payment_method === 'string' ? p.payment_method : null,
      ...(p.allowed_payment_method_types
        ? {
            allowed_payment_method_types: Object.values(p.allowed_payment_method_types) as string[],
          }
        : {}),
    };
    intents.set(intent.id, intent);
    if (!checked) return { status: 200, body: intent };
    // Off-session: the saved card is charged now, or the attempt fails with a 402.
    if (checked.state === 'ok') return { status: 200, body: pay(intent.id) };
    const answer = cards.declined(intent, checked.state);
    emit('payment_intent.payment_failed', intent);
    return answer;
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
    startsAs: Refund['status'] = refundsStartAs,
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
      status: startsAs,
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

  const must = (intentId: string) => {
    const intent = intents.get(intentId);
    if (!intent) throw new Error(`no PaymentIntent ${intentId}`);
    return intent;
  };
  /** The cardholder pays: a charge, and the card saved on the Customer when it was asked to. */
  function pay(intentId: string): Intent {
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
      payment_method: cards.cardFor(intent).id,
      last_payment_error: null,
    });
    emit('charge.succeeded', charge);
    emit('payment_intent.succeeded', intent);
    return intent;
  }
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
    intents,
    refunds,
    disputes,
    createIntent,
    cancelIntent,
    createRefund,
    intent: (intentId: string) => intents.get(intentId),
    pay,
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
    dashboardRefund: (intentId: string, amount?: number, startsAs?: Refund['status']) => {
      const answer = makeRefund(must(intentId), amount, {}, startsAs);
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
  };
}

export type StripeLedger = ReturnType<typeof createStripeLedger>;
