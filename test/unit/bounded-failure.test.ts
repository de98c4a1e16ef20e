import { ApplicationFailure } from '@temporalio/common';
import pg from 'pg';
import { ProviderRejected } from '../../src/providers/http-json';
import { ProviderUnavailable } from '../../src/providers/payment-provider';
import {
  boundedFailure,
  PERMANENT_AFTER_ATTEMPTS,
} from '../../src/temporal/permanent-failure-interceptor';
import { FailureType } from '../../workflows/contracts';

function databaseError(code: string): pg.DatabaseError {
  const error = new pg.DatabaseError('from Postgres', 0, 'error');
  error.code = code;
  return error;
}

/** The default, OUTAGE_RETRY_ATTEMPTS: about a day at a minute apart. */
const OUTAGE_ATTEMPTS = 1_440;

const typeOf = (error: unknown) =>
  error instanceof ApplicationFailure ? { type: error.type, final: error.nonRetryable } : 'as is';

describe('every activity failure is bounded', () => {
  it('fails for good at once on data Postgres can never store', () => {
    for (const code of ['22021', '22P02', '22003', '23514']) {
      expect(typeOf(boundedFailure(databaseError(code), 1, OUTAGE_ATTEMPTS))).toEqual({
        type: FailureType.InvalidData,
        final: true,
      });
    }
  });

  it('retries an outage until its attempts are used, then fails it for good', () => {
    const outages = [
      new ProviderUnavailable('down'),
      new ProviderRejected(503, {}),
      new ProviderRejected(429, {}),
      new ProviderRejected(401, {}),
      databaseError('57P01'),
    ];
    for (const error of outages) {
      expect(boundedFailure(error, OUTAGE_ATTEMPTS - 1, OUTAGE_ATTEMPTS)).toBe(error);
      expect(typeOf(boundedFailure(error, OUTAGE_ATTEMPTS, OUTAGE_ATTEMPTS))).toEqual({
        type: FailureType.Permanent,
        final: true,
      });
    }
  });

  it('fails a failure nobody mapped for good after the bound, not before', () => {
    const notFound = new ProviderRejected(404, { message: 'no such payment' });
    expect(boundedFailure(notFound, PERMANENT_AFTER_ATTEMPTS - 1, OUTAGE_ATTEMPTS)).toBe(notFound);
    expect(typeOf(boundedFailure(notFound, PERMANENT_AFTER_ATTEMPTS, OUTAGE_ATTEMPTS))).toEqual({
      type: FailureType.Permanent,
      final: true,
    });
    const bug = new TypeError('x is undefined');
    expect(typeOf(boundedFailure(bug, PERMANENT_AFTER_ATTEMPTS, OUTAGE_ATTEMPTS))).toEqual({
      type: FailureType.Permanent,
      final: true,
    });
  });

  it("leaves an activity's own typed failure alone", () => {
    const refused = ApplicationFailure.nonRetryable('refused', FailureType.Validation);
    expect(boundedFailure(refused, OUTAGE_ATTEMPTS, OUTAGE_ATTEMPTS)).toBe(refused);
  });
});
