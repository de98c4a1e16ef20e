/**
 * One real stack per provider profile for the money model: the simulator as today, or galang's
 * own adapter (src/providers/<name>) pointed at the provider's loopback stand-in, its
 * notifications relayed to the API's webhook route for that provider.
 */
import { DEV_SIMULATOR_SECRET } from '../../src/config/config';
import { DonationRepository } from '../../src/donations/donation-repository';
import { createMidtransProvider } from '../../src/providers/midtrans/midtrans-provider';
import type { PaymentProvider } from '../../src/providers/payment-provider';
import { createStripeProvider } from '../../src/providers/stripe/stripe-provider';
import { createXenditProvider } from '../../src/providers/xendit/xendit-provider';
import { FollowUpWorkflows } from '../../src/donations/follow-up-workflows';
import { WebhookDelivery } from '../../src/webhooks/webhook-delivery';
import { WebhookInboxRepository } from '../../src/webhooks/webhook-inbox-repository';
import { startMidtransStandin, startStripeStandin, startXenditStandin } from '../support/standins';
import { startStack } from '../support/stack';
import type { Stack } from '../support/stack';
import type { DriverContext } from './driver-context';
import { providerOf } from './history';
import { lifecyclesOf } from './lifecycles';
import type { ProviderProfile } from './history';
import { MidtransDriver } from './midtrans-driver';
import type { ProviderDriver } from './provider-driver';
import { SimulatorDriver } from './simulator-driver';
import { Notifications, WebhookRelay } from './standin-notifications';
import { StripeDriver } from './stripe-driver';
import { WebhookRecorder } from './webhook-recorder';
import { XenditDriver } from './xendit-driver';

export interface MoneyStackOptions {
  paymentTimeoutSeconds: number;
  settleHorizonSeconds: number;
}

/** The providers' documented retry schedules, compressed: an hour of Stripe's is 0.36 s. */
const TIME_SCALE = 0.0001;
const STRIPE_KEY = 'sk_test_money_model';
const STRIPE_SECRET = 'whsec_money_model';
const MIDTRANS_KEY = 'SB-Mid-server-money-model';
const XENDIT_KEY = 'xnd_development_money_model';
const XENDIT_TOKEN = 'xendit-money-model-token';

interface Built {
  adapter: PaymentProvider;
  driver: (stack: Stack) => ProviderDriver;
  close: () => Promise<void>;
}

async function standin(profile: ProviderProfile, relay: WebhookRelay, at: string): Promise<Built> {
  if (profile === 'stripe' || profile === 'stripe-legacy') {
    const path = '/v1/webhooks/stripe';
    const apiVersion = profile === 'stripe' ? '2025-03-31.basil' : '2024-06-20';
    const stripe = await startStripeStandin({
      secretKey: STRIPE_KEY,
      endpoints: [{ url: `${at}${path}`, secret: STRIPE_SECRET, apiVersion }],
      timeScale: TIME_SCALE,
      refundsStartAs: 'pending',
    });
    const channels = stripe.notifiers.map((notifier) => ({
      notifier,
      path,
      headers: StripeDriver.headers(STRIPE_SECRET),
    }));
    const notifications = new Notifications(channels, relay);
    return {
      adapter: createStripeProvider({
        baseUrl: stripe.url,
        secretKey: STRIPE_KEY,
        webhookSecrets: [STRIPE_SECRET],
      }),
      driver: () => new StripeDriver(profile, stripe, notifications),
      close: () => stripe.close(),
    };
  }
  if (profile === 'midtrans' || profile === 'midtrans-echannel') {
    const path = '/v1/webhooks/midtrans';
    const midtrans = await startMidtransStandin({
      serverKey: MIDTRANS_KEY,
      notificationUrl: `${at}${path}`,
      timeScale: TIME_SCALE,
    });
    const channel = {
      notifier: midtrans.notifier,
      path,
      headers: (d: { headers: object }) => ({ ...d.headers }),
    };
    const notifications = new Notifications([channel], relay);
    const method = profile === 'midtrans' ? 'qris' : 'echannel';
    return {
      adapter: createMidtransProvider({ baseUrl: midtrans.url, serverKeys: [MIDTRANS_KEY] }),
      driver: (stack) =>
        new MidtransDriver(
          profile,
          method,
          midtrans,
          notifications,
          MIDTRANS_KEY,
          stack.temporal,
          stack.config.temporal.taskQueue,
        ),
      close: () => midtrans.close(),
    };
  }
  const path = '/v1/webhooks/xendit';
  const xendit = await startXenditStandin({
    secretKey: XENDIT_KEY,
    callbackToken: XENDIT_TOKEN,
    invoiceCallbackUrl: `${at}${path}`,
    refundCallbackUrl: `${at}${path}`,
    timeScale: TIME_SCALE,
  });
  const channels = [xendit.invoiceNotifier, xendit.refundNotifier].map((notifier) => ({
    notifier,
    path,
    headers: (d: { headers: object }) => ({ ...d.headers }),
  }));
  const notifications = new Notifications(channels, relay);
  return {
    adapter: createXenditProvider({
      baseUrl: xendit.url,
      secretKey: XENDIT_KEY,
      callbackTokens: [XENDIT_TOKEN],
    }),
    driver: () => new XenditDriver(profile, xendit, notifications, XENDIT_KEY),
    close: () => xendit.close(),
  };
}

/** Starts the stack of one profile; `stop` closes it and its stand-in. */
export async function startMoneyStack(
  profile: ProviderProfile,
  options: MoneyStackOptions,
): Promise<{ ctx: DriverContext; stop: () => Promise<void> }> {
  const simulated = providerOf(profile) === 'simulator';
  const relay = new WebhookRelay();
  const built = simulated ? undefined : await standin(profile, relay, await relay.listen());
  const name = providerOf(profile);
  const stack = await startStack({
    autoPayMs: -1,
    paymentTimeoutSeconds: options.paymentTimeoutSeconds,
    verifyWithProvider: profile === 'simulator-verify',
    env: { PAYMENT_SETTLE_HORIZON_SECONDS: String(options.settleHorizonSeconds) },
    ...(built && { providers: new Map([[name, built.adapter]]), defaultProvider: name }),
  });
  relay.target = stack.apiUrl;
  let provider: ProviderDriver;
  let closeProvider: () => Promise<void>;
  if (built) {
    provider = built.driver(stack);
    closeProvider = async () => {
      await built.close();
      await relay.close();
    };
  } else {
    const recorder = new WebhookRecorder(
      `${stack.apiUrl}/v1/webhooks/simulator`,
      DEV_SIMULATOR_SECRET,
    );
    stack.simulator.webhookUrl = await recorder.listen();
    provider = new SimulatorDriver(
      profile,
      lifecyclesOf(profile).method,
      stack.simulator,
      stack.simulatorUrl,
      recorder,
    );
    closeProvider = () => recorder.close();
  }
  let restarting = Promise.resolve();
  const ctx: DriverContext = {
    stack,
    provider,
    delivery: new WebhookDelivery({
      inbox: new WebhookInboxRepository(stack.db),
      donations: new DonationRepository(stack.db),
      providers: stack.providers,
      temporal: stack.temporal,
      followUps: new FollowUpWorkflows(stack.temporal, stack.config.temporal.taskQueue),
    }),
    paymentTimeoutSeconds: options.paymentTimeoutSeconds,
    settleHorizonSeconds: options.settleHorizonSeconds,
    restartWorker() {
      restarting = restarting.then(() => stack.restartWorker());
      return restarting;
    },
  };
  return {
    ctx,
    stop: async () => {
      await stack.stop();
      await closeProvider();
    },
  };
}
