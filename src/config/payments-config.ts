import type { EnvReader } from './env-reader';

export const paymentProviders = ['simulator', 'midtrans', 'xendit', 'stripe'] as const;
export type PaymentProviderName = (typeof paymentProviders)[number];

/** Provider credentials; a provider is available when its credentials are set. */
export interface PaymentsConfig {
  /** The provider new donations use. */
  readonly provider: PaymentProviderName;
  /**
   * Providers being retired (PROVIDERS_CLOSING): their credentials stay, their webhooks and
   * open donations are served until those end, and they take no new donations. Remove one from
   * the configuration only once none of its donations is open (boot refuses earlier).
   */
  readonly closing: readonly PaymentProviderName[];
  readonly midtrans?: { readonly baseUrl: string; readonly serverKeys: readonly string[] };
  readonly xendit?: {
    readonly baseUrl: string;
    readonly secretKey: string;
    readonly callbackTokens: readonly string[];
  };
  readonly stripe?: {
    readonly baseUrl: string;
    readonly secretKey: string;
    readonly webhookSecrets: readonly string[];
  };
}

/** Midtrans' Core API; production talks to the real one unless told otherwise. */
export const MIDTRANS_PRODUCTION_URL = 'https://api.midtrans.com';
export const MIDTRANS_SANDBOX_URL = 'https://api.sandbox.midtrans.com';

/**
 * PAYMENT_PROVIDER, PROVIDERS_CLOSING and the credentials of each provider set up; the chosen
 * one and every closing one must have them. Midtrans' base URL defaults to its sandbox only
 * outside production.
 */
export function readPayments(
  reader: EnvReader,
  problems: string[],
  production: boolean,
): PaymentsConfig {
  const provider = reader.oneOf('PAYMENT_PROVIDER', paymentProviders, 'simulator');
  const closing = readClosing(reader, problems);
  const midtransKeys = reader.list('MIDTRANS_SERVER_KEYS', undefined, true);
  const xenditKey = reader.optional('XENDIT_SECRET_KEY');
  const xenditTokens = reader.list('XENDIT_CALLBACK_TOKENS', undefined, true);
  const stripeKey = reader.optional('STRIPE_SECRET_KEY');
  const stripeSecrets = reader.list('STRIPE_WEBHOOK_SECRETS', undefined, true);
  const payments: PaymentsConfig = {
    provider,
    closing,
    ...(midtransKeys.length > 0 && {
      midtrans: {
        baseUrl: reader.url(
          'MIDTRANS_BASE_URL',
          production ? MIDTRANS_PRODUCTION_URL : MIDTRANS_SANDBOX_URL,
        ),
        serverKeys: midtransKeys,
      },
    }),
    ...(xenditKey !== undefined && {
      xendit: {
        baseUrl: reader.url('XENDIT_BASE_URL', 'https://api.xendit.co'),
        secretKey: xenditKey,
        callbackTokens: xenditTokens,
      },
    }),
    ...(stripeKey !== undefined && {
      stripe: {
        baseUrl: reader.url('STRIPE_BASE_URL', 'https://api.stripe.com'),
        secretKey: stripeKey,
        webhookSecrets: stripeSecrets,
      },
    }),
  };
  if (provider !== 'simulator' && payments[provider] === undefined) {
    problems.push(`PAYMENT_PROVIDER is ${provider}, but its credentials are not set`);
  }
  for (const name of closing) {
    if (name !== 'simulator' && payments[name] === undefined) {
      problems.push(
        `PROVIDERS_CLOSING lists ${name}, but its credentials are not set: a closing provider keeps them until its donations end`,
      );
    }
  }
  if (xenditKey !== undefined && xenditTokens.length === 0) {
    problems.push('XENDIT_CALLBACK_TOKENS is required with XENDIT_SECRET_KEY');
  }
  if (stripeKey !== undefined && stripeSecrets.length === 0) {
    problems.push('STRIPE_WEBHOOK_SECRETS is required with STRIPE_SECRET_KEY');
  }
  return payments;
}

/**
 * The providers' test credentials and sandbox URLs among the configured ones: each moves no
 * money, so production refuses them unless a staging deployment says it runs on sandboxes.
 * Keys are named by their setting and position, never printed.
 */
export function providerSandboxProblems(payments: PaymentsConfig): string[] {
  const problems: string[] = [];
  const { midtrans, xendit, stripe } = payments;
  midtrans?.serverKeys.forEach((key, index) => {
    if (key.startsWith('SB-Mid-')) {
      problems.push(`MIDTRANS_SERVER_KEYS: "#${index + 1}" is a Midtrans sandbox key (SB-Mid-…)`);
    }
  });
  const midtransHost = midtrans && URL.canParse(midtrans.baseUrl) && new URL(midtrans.baseUrl).host;
  if (midtransHost && midtransHost.endsWith('sandbox.midtrans.com')) {
    problems.push(`MIDTRANS_BASE_URL is the Midtrans sandbox (${midtransHost})`);
  }
  if (xendit?.secretKey.startsWith('xnd_development_')) {
    problems.push('XENDIT_SECRET_KEY is a Xendit test-mode key (xnd_development_…)');
  }
  const stripeTestPrefix = stripe?.secretKey.match(/^(sk|rk)_test_/)?.[0];
  if (stripeTestPrefix !== undefined) {
    problems.push(`STRIPE_SECRET_KEY is a Stripe test-mode key (${stripeTestPrefix}…)`);
  }
  return problems;
}

/** PROVIDERS_CLOSING: comma-separated provider names, each known, none twice. */
function readClosing(reader: EnvReader, problems: string[]): PaymentProviderName[] {
  const names = reader.list('PROVIDERS_CLOSING', undefined, true);
  const known = names.filter((name): name is PaymentProviderName =>
    (paymentProviders as readonly string[]).includes(name),
  );
  for (const name of names) {
    if (!known.includes(name as PaymentProviderName)) {
      problems.push(
        `PROVIDERS_CLOSING must list providers of ${paymentProviders.join(', ')}, got "${name}"`,
      );
    }
  }
  return [...new Set(known)];
}
