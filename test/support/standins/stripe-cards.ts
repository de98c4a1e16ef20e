import { id, stripeError, unix } from './stripe-objects';
import type { Intent } from './stripe-objects';
import type { StandinResponse } from './loopback';

/**
 * How a saved card answers its next off-session charge: `ok` pays; the declines are the ones
 * docs.stripe.com/declines/codes lists for them (`insufficient_funds` as a `card_declined`
 * decline code, `expired_card` as its own code); `authentication_required` asks the
 * cardholder for 3-D Secure, which an off-session charge cannot do.
 */
export type CardState = 'ok' | 'insufficient_funds' | 'expired_card' | 'authentication_required';

export interface Customer {
  id: string;
  object: 'customer';
  metadata: Record<string, string>;
  created: number;
  livemode: false;
}

export interface PaymentMethod {
  id: string;
  object: 'payment_method';
  type: 'card';
  customer: string | null;
  created: number;
}

/** The errors an off-session charge answers (docs.stripe.com/declines/codes). */
const DECLINES: Record<Exclude<CardState, 'ok'>, { code: string; decline_code: string }> = {
  insufficient_funds: { code: 'card_declined', decline_code: 'insufficient_funds' },
  expired_card: { code: 'expired_card', decline_code: 'expired_card' },
  authentication_required: {
    code: 'authentication_required',
    decline_code: 'authentication_required',
  },
};

/**
 * The stand-in's Customers and the cards saved on them. A PaymentIntent created with a
 * `customer` and `setup_future_usage=off_session` attaches its card to that Customer once the
 * cardholder pays it (docs.stripe.com/api/payment_intents/create#setup_future_usage); an
 * off-session, confirmed PaymentIntent with that card and Customer charges it at once, or
 * fails with a 402 `card_error` that carries the PaymentIntent, left in
 * `requires_payment_method` with its `last_payment_error`.
 */
export function createStripeCards() {
  const customers = new Map<string, Customer>();
  const deleted = new Set<string>();
  const methods = new Map<string, PaymentMethod>();
  const states = new Map<string, CardState>();
  /** Answers for the next charges, in order, before the card's own state applies again. */
  const queued = new Map<string, CardState[]>();

  const createCustomer = (form: Record<string, unknown>): StandinResponse => {
    const customer: Customer = {
      id: id('cus'),
      object: 'customer',
      metadata: (form.metadata ?? {}) as Record<string, string>,
      created: unix(),
      livemode: false,
    };
    customers.set(customer.id, customer);
    return { status: 200, body: customer };
  };

  /** The card the cardholder paid `intent` with; saved on its Customer when it asked to. */
  const cardFor = (intent: Intent): PaymentMethod => {
    const existing = intent.payment_method ? methods.get(intent.payment_method) : undefined;
    if (existing) return existing;
    const saving = intent.setup_future_usage === 'off_session' && intent.customer;
    const card: PaymentMethod = {
      id: id('pm'),
      object: 'payment_method',
      type: 'card',
      customer: saving ? (intent.customer ?? null) : null,
      created: unix(),
    };
    methods.set(card.id, card);
    states.set(card.id, 'ok');
    return card;
  };

  /**
   * Checks an off-session charge's card and Customer: a card attached to another Customer (or
   * none) is refused, as Stripe refuses it; else the card's state, for the charge to follow.
   */
  const offSessionState = (
    customer: unknown,
    paymentMethod: unknown,
  ): { state: CardState } | { refused: StandinResponse } => {
    const card = typeof paymentMethod === 'string' ? methods.get(paymentMethod) : undefined;
    if (!card) {
      return {
        refused: stripeError(
          400,
          'invalid_request_error',
          `No such PaymentMethod: '${String(paymentMethod)}'`,
          {
            code: 'resource_missing',
            param: 'payment_method',
          },
        ),
      };
    }
    if (typeof customer !== 'string' || card.customer !== customer) {
      return {
        refused: stripeError(
          400,
          'invalid_request_error',
          'The provided PaymentMethod does not belong to the Customer given.',
          { param: 'payment_method' },
        ),
      };
    }
    return { state: queued.get(card.id)?.shift() ?? states.get(card.id) ?? 'ok' };
  };

  /**
   * DELETE /v1/customers/:id (docs.stripe.com/api/customers/delete): "removes all credit card
   * details and prevents any further operations"; its cards are no longer the Customer's, so an
   * off-session charge is refused. A Customer that does not exist, or no longer does, is a 404
   * `resource_missing`.
   */
  const deleteCustomer = (customerId: string): StandinResponse => {
    if (!customers.has(customerId) || deleted.has(customerId)) {
      return stripeError(404, 'invalid_request_error', `No such customer: '${customerId}'`, {
        code: 'resource_missing',
      });
    }
    deleted.add(customerId);
    for (const card of methods.values()) if (card.customer === customerId) card.customer = null;
    return { status: 200, body: { id: customerId, object: 'customer', deleted: true } };
  };

  /** The 402 of a failed off-session charge, the intent in it as it now is. */
  const declined = (intent: Intent, state: Exclude<CardState, 'ok'>): StandinResponse => {
    const { code, decline_code } = DECLINES[state];
    const message =
      state === 'authentication_required'
        ? 'Your card was declined. This transaction requires authentication.'
        : 'Your card was declined.';
    const error = { type: 'card_error', code, decline_code, message };
    Object.assign(intent, {
      status: 'requires_payment_method',
      last_payment_error: { ...error, payment_method: { id: intent.payment_method } },
    });
    return stripeError(402, 'card_error', message, {
      code,
      decline_code,
      payment_intent: structuredClone(intent),
    });
  };

  return {
    customers,
    methods,
    createCustomer,
    deleteCustomer,
    /** Whether the Customer was deleted (a released card). */
    customerDeleted: (customerId: string) => deleted.has(customerId),
    cardFor,
    offSessionState,
    declined,
    /** How a saved card answers its next off-session charge (the cardholder's bank). */
    setCard: (paymentMethodId: string, state: CardState) => {
      if (!methods.has(paymentMethodId)) throw new Error(`no PaymentMethod ${paymentMethodId}`);
      states.set(paymentMethodId, state);
    },
    /** How the card's next charges answer, one each, then its state again. */
    queueCard: (paymentMethodId: string, answers: readonly CardState[]) => {
      if (!methods.has(paymentMethodId)) throw new Error(`no PaymentMethod ${paymentMethodId}`);
      queued.set(paymentMethodId, [...(queued.get(paymentMethodId) ?? []), ...answers]);
    },
  };
}

export type StripeCards = ReturnType<typeof createStripeCards>;
