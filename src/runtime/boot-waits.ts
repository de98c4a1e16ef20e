import type { Logger } from 'pino';
import type { Config } from '../config/config';
import type { Db } from '../db/database';
import { isPostgresMisconfiguration } from '../db/postgres-misconfiguration';
import { DonationRepository } from '../donations/donation-repository';
import {
  ProvidersStillOpenError,
  checkOpenDonationProviders,
} from '../donations/open-provider-check';
import type { ProviderRegistry } from '../providers/payment-provider';
import { PermanentBootError, waitUntilUp } from '../resilience/wait-until-up';
import {
  describeTemporalFailure,
  isTemporalMisconfiguration,
} from '../temporal/temporal-reachability';
import { prepareDatabase } from './open-resources';

/**
 * Boot waits for Postgres instead of exiting: creates the database if needed and migrates it,
 * retrying with backoff while Postgres refuses connections or is starting. Refused credentials,
 * a missing right or a migration that fails end the boot with the reason.
 */
export function waitForPostgres(config: Config, db: Db, log: Logger): Promise<void> {
  return waitUntilUp('Postgres', () => prepareDatabase(config, db), {
    log,
    isPermanent: isPostgresMisconfiguration,
  });
}

/**
 * Boot waits for Temporal instead of exiting: `attempt` (connect, describe the namespace, …)
 * is retried with backoff while the frontend is unreachable or the namespace does not exist
 * yet. A certificate that does not verify or refused credentials end the boot with the reason.
 */
export function waitForTemporal<T>(
  config: Config,
  log: Logger,
  attempt: () => Promise<T>,
): Promise<T> {
  return waitUntilUp('Temporal', attempt, {
    log,
    isPermanent: isTemporalMisconfiguration,
    describe: (error) => describeTemporalFailure(error, config.temporal.namespace),
  });
}

/**
 * Refuses to boot while donations are open on a provider this configuration does not set up
 * (their payments would never be credited); logs how many each closing provider still has.
 */
export async function checkProvidersAtBoot(
  config: Config,
  db: Db,
  providers: ProviderRegistry,
  log: Logger,
): Promise<void> {
  const donations = new DonationRepository(db);
  let closing: Map<string, number>;
  try {
    closing = await waitUntilUp(
      'Postgres',
      () =>
        checkOpenDonationProviders(donations, new Set(providers.keys()), config.payments.closing),
      {
        log,
        isPermanent: (error) =>
          error instanceof ProvidersStillOpenError || isPostgresMisconfiguration(error),
      },
    );
  } catch (error) {
    if (error instanceof PermanentBootError && error.cause instanceof ProvidersStillOpenError) {
      throw new PermanentBootError(`payment providers: ${error.cause.message}`, {
        cause: error.cause,
      });
    }
    throw error;
  }
  for (const [provider, open] of closing) {
    log.info({ provider, openDonations: open }, 'provider closing: it takes no new donations');
  }
}
