import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import pg from 'pg';
import { isTransientInfrastructureError } from '../errors/transient';
import { ProviderRejected } from '../providers/http-json';
import { ProviderUnavailable } from '../providers/payment-provider';
import { FailureType } from '../../workflows/contracts';

/** Attempts a failure nobody mapped gets before it counts as permanent. */
export const PERMANENT_AFTER_ATTEMPTS = 5;

/** A provider's answers that say "later" or "fix our configuration", not "never". */
const RETRYABLE_PROVIDER_STATUSES = new Set([401, 403, 408, 409, 425, 429]);

/**
 * SQLSTATE class 22 (data exception: a NUL in text, a value out of range) and 23514 (a check
 * constraint): the row can never be stored, whatever the retry.
 */
function isInvalidData(error: unknown): error is pg.DatabaseError {
  return (
    error instanceof pg.DatabaseError &&
    (error.code?.startsWith('22') === true || error.code === '23514')
  );
}

function isTransient(error: unknown): boolean {
  if (error instanceof ProviderUnavailable || isTransientInfrastructureError(error)) return true;
  if (error instanceof ProviderRejected) {
    return error.status >= 500 || RETRYABLE_PROVIDER_STATUSES.has(error.status);
  }
  return false;
}

/**
 * What an activity's failure becomes: an outage (Postgres, Temporal, a provider down) is thrown
 * as it is, retried with backoff (and counted by the activity-retry metric) until its
 * `outageAttempts` are used (OUTAGE_RETRY_ATTEMPTS: about a day at the money steps' backoff);
 * data Postgres can never store fails for good at once; any other failure nobody mapped (a
 * provider's 404 for its own payment, a bug) fails for good after
 * {@link PERMANENT_AFTER_ATTEMPTS}. Either way the workflow ends where an operator sees it.
 * Counted in attempts, not time: a local activity retried after a workflow timer starts a new
 * schedule, so only its attempt number spans the whole outage.
 */
export function boundedFailure(error: unknown, attempt: number, outageAttempts: number): unknown {
  if (error instanceof ApplicationFailure || error instanceof CancelledFailure) return error;
  const message = error instanceof Error ? error.message : String(error);
  if (isInvalidData(error)) {
    return ApplicationFailure.create({
      message: `Postgres cannot store this: ${message}`,
      type: FailureType.InvalidData,
      nonRetryable: true,
      cause: error,
    });
  }
  const transient = isTransient(error);
  if (attempt < (transient ? outageAttempts : PERMANENT_AFTER_ATTEMPTS)) return error;
  return ApplicationFailure.create({
    message: transient
      ? `Retried through an outage ${attempt} times (OUTAGE_RETRY_ATTEMPTS): ${message}`
      : `Failed ${attempt} times: ${message}`,
    type: FailureType.Permanent,
    nonRetryable: true,
    cause: error instanceof Error ? error : undefined,
  });
}

/** Applies {@link boundedFailure} to every activity the worker runs. */
export function permanentFailureInterceptor(outageAttempts: number): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        try {
          return await next(input);
        } catch (error) {
          throw boundedFailure(error, ctx.info.attempt, outageAttempts);
        }
      },
    },
  });
}
