import type { Logger } from 'pino';
import type { Config } from '../config/config';
import type { Db } from '../db/database';
import { isPostgresMisconfiguration } from '../db/postgres-misconfiguration';
import { waitUntilUp } from '../resilience/wait-until-up';
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
