import { pledgeScheduleId } from '../../workflows/contracts';
import { createStripeProvider } from '../../src/providers/stripe/stripe-provider';
import type { SavedMethodState } from '../../src/providers/simulator/simulator-saved-methods';
import { WebhookRelay } from '../money/standin-notifications';
import { startMailStack } from './mail-stack';
import type { MailStack } from './mail-stack';
import { startStripeStandin } from './standins';
import type { StackOptions } from './stack';

/** A provider whose cards galang keeps, as a test plays the cardholder and their bank. */
export interface CardProvider {
  readonly name: 'simulator' | 'stripe';
  /** Whether new payments pay by themselves (the simulator's auto-pay) or wait for `pay`. */
  readonly paysByItself: boolean;
  /** How the kept method (galang's saved reference) answers its next charge. */
  setCard(savedMethod: string, state: SavedMethodState): void;
  /** How the kept method's next charges answer, one each, then its state again. */
  queueCard(savedMethod: string, answers: readonly SavedMethodState[]): void;
  /** The cardholder pays the payment (a first period, an authentication). */
  pay(providerReference: string): void;
  /** Whether the payment waits for the cardholder. */
  pending(providerReference: string): boolean;
  /** Holds a donation's payment unpaid until `pay` (the simulator pays by itself otherwise). */
  hold(donationId: string): void;
  /** The payments the provider made for these donations: their status and the card charged. */
  payments(donationIds: readonly string[]): { status: string; charged: boolean }[];
  /** Whether galang released the kept method at the provider. */
  released(savedMethod: string): boolean;
  /** The provider's next answer to releasing the method is a 503, as an outage's. */
  failNextRelease(savedMethod: string): void;
}

export interface CardStack {
  mail: MailStack;
  cards: CardProvider;
  /** Kills and replaces the worker; calls at once are taken one after the other. */
  restartWorker(): Promise<void>;
  /** Stops the stack, its pledges' schedules deleted first. */
  stop(): Promise<void>;
}

/** The stack's worker restarts, one at a time however many cases ask at once. */
function serialRestarts(mail: MailStack): () => Promise<void> {
  let restarting = Promise.resolve();
  return () => {
    restarting = restarting.then(() => mail.stack.restartWorker());
    return restarting;
  };
}

/** Stops the stack, its pledges' schedules first: they live on the shared Temporal server. */
async function stopWithSchedules(mail: MailStack): Promise<void> {
  const pledges = await mail.stack.db.selectFrom('pledges').select('id').execute();
  for (const { id } of pledges) {
    await mail.stack.temporal.schedule
      .getHandle(pledgeScheduleId(id))
      .delete()
      .catch(() => undefined);
  }
  await mail.stop();
}

const STRIPE_KEY = 'sk_test_pledge_cards';
/** galang's reference to a kept Stripe card is `<customer>/<payment method>`. */
const cardOf = (savedMethod: string) => savedMethod.split('/')[1] ?? '';
const customerOf = (savedMethod: string) => savedMethod.split('/')[0] ?? '';
const STRIPE_SECRET = 'whsec_pledge_cards';

/**
 * A mail stack whose provider keeps cards: the simulator, or Stripe's stand-in (customers,
 * `setup_future_usage`, off-session PaymentIntents, docs.stripe.com) behind galang's Stripe
 * adapter, its events relayed to the API.
 */
export async function startCardStack(
  name: CardProvider['name'],
  label: string,
  options: StackOptions,
): Promise<CardStack> {
  if (name === 'simulator') {
    const mail = await startMailStack(label, options);
    const simulator = mail.stack.simulator;
    return {
      mail,
      cards: {
        name,
        paysByItself: true,
        setCard: (method, state) => simulator.setSavedMethod(method, state),
        queueCard: (method, answers) => {
          simulator.queueSavedMethod(method, answers);
        },
        pay: (reference) => simulator.transition(reference, 'settled'),
        pending: (reference) => simulator.payment(reference)?.status === 'pending',
        hold: (donationId) => {
          simulator.plan(donationId, { autoPayMs: -1 });
        },
        payments: (ids) =>
          simulator
            .payments()
            .filter((payment) => ids.includes(payment.reference))
            .map((payment) => ({
              status: payment.status === 'settled' ? 'paid' : payment.status,
              charged: payment.charged_method !== undefined,
            })),
        released: (method) => simulator.savedMethodReleased(method),
        failNextRelease: (method) => {
          simulator.failNextSavedMethodRelease(method);
        },
      },
      restartWorker: serialRestarts(mail),
      stop: () => stopWithSchedules(mail),
    };
  }
  const relay = new WebhookRelay();
  const at = await relay.listen();
  const stripe = await startStripeStandin({
    secretKey: STRIPE_KEY,
    endpoints: [
      { url: `${at}/v1/webhooks/stripe`, secret: STRIPE_SECRET, apiVersion: '2025-03-31.basil' },
    ],
  });
  const adapter = createStripeProvider({
    baseUrl: stripe.url,
    secretKey: STRIPE_KEY,
    webhookSecrets: [STRIPE_SECRET],
  });
  const mail = await startMailStack(label, {
    ...options,
    providers: new Map([['stripe', adapter]]),
    defaultProvider: 'stripe',
  });
  relay.target = mail.stack.apiUrl;
  return {
    mail,
    cards: {
      name,
      paysByItself: false,
      setCard: (method, state) => {
        stripe.setCard(cardOf(method), state);
      },
      queueCard: (method, answers) => {
        stripe.queueCard(cardOf(method), answers);
      },
      pay: (reference) => {
        stripe.pay(reference);
      },
      pending: (reference) =>
        ['requires_payment_method', 'requires_action'].includes(
          stripe.intent(reference)?.status ?? '',
        ),
      hold: () => undefined,
      payments: (ids) =>
        [...stripe.intents.values()]
          .filter((intent) => ids.includes(intent.metadata.donation_id ?? ''))
          .map((intent) => ({
            status: intent.status === 'succeeded' ? 'paid' : 'declined',
            charged: intent.setup_future_usage !== 'off_session' && intent.customer !== null,
          })),
      released: (method) => stripe.customerDeleted(customerOf(method)),
      failNextRelease: (method) => {
        stripe.faults.add(`DELETE /v1/customers/${customerOf(method)}`, {
          kind: 'status',
          status: 503,
        });
      },
    },
    restartWorker: serialRestarts(mail),
    stop: async () => {
      await stopWithSchedules(mail);
      await stripe.close();
      await relay.close();
    },
  };
}
