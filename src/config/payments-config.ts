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

/**
 * PAYMENT_PROVIDER, PROVIDERS_CLOSING and the credentials of each provider set up; the chosen
 * one and every closing one must have them.
 */
export function readPayments(reader: EnvReader, problems: string[]): PaymentsConfig {
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
        baseUrl: reader.url('MIDTRANS_BASE_URL', 'https://api.sandbox.midtrans.com'),
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
