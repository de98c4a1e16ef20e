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
  const db = createDatabase({ connectionString: config.databaseUrl, max: poolSize });
  try {
    await prepareDatabase(config, db);
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return db;
}

/** Creates the database if needed and migrates it through `db`; safe to repeat and to race. */
export async function prepareDatabase(config: Config, db: Db): Promise<void> {
  await ensureDatabase(config.databaseUrl);
  await migrateToLatest(db);
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
