import { ApplicationFailure } from '@temporalio/activity';
import { AppError } from '../src/errors/error-catalogue';
import type { PledgeService } from '../src/pledges/pledge-service';
import { FailureType } from '../workflows/contracts';
import type { PledgePeriodOutcome } from '../workflows/contracts';

export interface PledgeActivityDeps {
  pledges: PledgeService;
}

/** The pledges' activities, built from their dependencies. */
export function createPledgeActivities(deps: PledgeActivityDeps) {
  return {
    /**
     * Starts the period's donation (or finds it started): its ID derives from pledge and
     * period, so a second action, a retry or a reset charges nothing twice.
     */
    async chargePledgePeriod(input: {
      pledgeId: string;
      at: string;
    }): Promise<PledgePeriodOutcome> {
      try {
        return await deps.pledges.chargePeriod(
          input.pledgeId,
          new Date(input.at),
          `pledge:${input.pledgeId}`,
        );
      } catch (error) {
        if (error instanceof AppError && error.code === 'pledge-not-found') {
          throw ApplicationFailure.nonRetryable(error.message, FailureType.Validation);
        }
        throw error;
      }
    },
  };
}

export type PledgeActivities = ReturnType<typeof createPledgeActivities>;
