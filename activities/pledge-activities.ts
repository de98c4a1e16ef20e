import { ApplicationFailure, Context } from '@temporalio/activity';
import { AppError } from '../src/errors/error-catalogue';
import type { PledgeBilling } from '../src/pledges/pledge-billing';
import type { PledgeService } from '../src/pledges/pledge-service';
import { FailureType } from '../workflows/contracts';
import type { PledgeAttempt, PledgeAttemptEnd, PledgePeriodOutcome } from '../workflows/contracts';

export interface PledgeActivityDeps {
  pledges: PledgeService;
  billing: PledgeBilling;
}

/** How often a wait for an attempt's donation tells Temporal it is still alive. */
const HEARTBEAT_MS = 10_000;

/** The pledges' activities, built from their dependencies. */
export function createPledgeActivities(deps: PledgeActivityDeps) {
  return {
    /**
     * Starts the attempt's donation (or finds it started): its ID derives from pledge, period
     * and attempt, so a second action, a retry or a reset charges nothing twice.
     */
    async chargePledgePeriod(input: {
      pledgeId: string;
      at: string;
      attempt: number;
    }): Promise<PledgePeriodOutcome> {
      try {
        return await deps.pledges.chargePeriod(
          input.pledgeId,
          new Date(input.at),
          `pledge:${input.pledgeId}`,
          input.attempt,
        );
      } catch (error) {
        if (error instanceof AppError && error.code === 'pledge-not-found') {
          throw ApplicationFailure.nonRetryable(error.message, FailureType.Validation);
        }
        throw error;
      }
    },

    /**
     * Mails the donor the attempt's payment action when the payment waits for them. It waits on
     * the donation's workflow: a worker shutting down cancels the wait, not its own shutdown.
     */
    async noticePledgeDonor(attempt: PledgeAttempt): Promise<string> {
      return Promise.race([deps.billing.notice(attempt), Context.current().cancelled]);
    },

    /**
     * Waits for the attempt's donation to end, heartbeating; a cancellation (the worker shutting
     * down) ends the wait at once, so another worker takes it up without a heartbeat timeout.
     */
    async settlePledgeAttempt(attempt: PledgeAttempt): Promise<PledgeAttemptEnd> {
      const context = Context.current();
      const beat = setInterval(() => {
        context.heartbeat();
      }, HEARTBEAT_MS);
      try {
        return await Promise.race([deps.billing.settle(attempt), context.cancelled]);
      } finally {
        clearInterval(beat);
      }
    },

    async pausePledgeForFailure(attempt: PledgeAttempt): Promise<void> {
      await deps.billing.pauseForFailure(attempt);
    },
  };
}

export type PledgeActivities = ReturnType<typeof createPledgeActivities>;
