import type { Config } from '../config/config';
import { createDatabase } from '../db/database';
import type { Db } from '../db/database';
import { ensureDatabase, migrateToLatest } from '../db/migrate';
import { createMidtransProvider } from '../providers/midtrans/midtrans-provider';
import { createSimulatorProvider } from '../providers/simulator/simulator-provider';
import { createStripeProvider } from '../providers/stripe/stripe-provider';
import { createXenditProvider } from '../providers/xendit/xendit-provider';
import type { PaymentProvider, ProviderRegistry } from '../providers/payment-provider';

/** Creates the database if needed, migrates it, and returns a pool on it. */
export async function openDatabase(config: Config, poolSize = 10): Promise<Db> {
  await ensureDatabase(config.databaseUrl);
  const db = createDatabase({ connectionString: config.databaseUrl, max: poolSize });
  await migrateToLatest(db);
  return db;
}

/**
 * The payment providers this deployment talks to, by the name used in webhook URLs. A provider
 * absent here has no webhook route (`/v1/webhooks/<name>` answers 404): the simulator exists
 * only where it is the configured provider.
 */
export function createProviders(config: Config): ProviderRegistry {
  const { midtrans, xendit, stripe } = config.payments;
  const providers: PaymentProvider[] = [
    ...(config.simulator.enabled
      ? [
          createSimulatorProvider({
            baseUrl: config.simulator.url,
            webhookSecrets: config.simulator.webhookSecrets,
          }),
        ]
      : []),
    ...(midtrans ? [createMidtransProvider(midtrans)] : []),
    ...(xendit ? [createXenditProvider(xendit)] : []),
    ...(stripe ? [createStripeProvider(stripe)] : []),
  ];
  return new Map(providers.map((p) => [p.name, p]));
}
