import type { EnvReader } from './env-reader';
import { paymentProviders } from './payments-config';
import type { PaymentProviderName } from './payments-config';

/** What the webhook intake reads and holds at once, and how long it keeps raw bodies. */
export interface WebhookConfig {
  /** Bytes each provider's route reads at most; past it the answer is 413 and nothing is read. */
  readonly bodyLimits: Readonly<Record<PaymentProviderName, number>>;
  /** Webhook requests this process reads, verifies and records at once; past it 503. */
  readonly maxInFlight: number;
  /** Days a raw body (payer data included) is kept before reconciliation purges it. */
  readonly bodyRetentionDays: number;
}

/**
 * Each provider's documented notifications with room to spare: Midtrans' and Xendit's are a few
 * KiB (Midtrans' grow by one `refunds[]` entry per refund, Xendit's invoice callbacks list the
 * invoice's items); the simulator's are galang's own. A Stripe event carries its whole object,
 * a dispute's evidence included (up to 150,000 characters, stripe-node `DisputeUpdateParams`),
 * and an `*.updated` event the previous values as well.
 */
const DEFAULT_BODY_LIMITS: Record<PaymentProviderName, number> = {
  simulator: 16 * 1024,
  midtrans: 64 * 1024,
  xendit: 64 * 1024,
  stripe: 1024 * 1024,
};

export function readWebhooks(reader: EnvReader): WebhookConfig {
  const bodyLimits = Object.fromEntries(
    paymentProviders.map((name) => [
      name,
      reader.integer(
        `WEBHOOK_BODY_LIMIT_${name.toUpperCase()}`,
        DEFAULT_BODY_LIMITS[name],
        1024,
        8 * 1024 * 1024,
      ),
    ]),
  ) as Record<PaymentProviderName, number>;
  return {
    bodyLimits,
    maxInFlight: reader.integer('WEBHOOK_MAX_IN_FLIGHT', 64, 1, 10_000),
    bodyRetentionDays: reader.integer('WEBHOOK_BODY_RETENTION_DAYS', 30, 1, 3_650),
  };
}
