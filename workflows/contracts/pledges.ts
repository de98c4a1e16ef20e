import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import type { DonationStatus } from './donation-status';

/**
 * A pledge's period workflow, started by the pledge's schedule at every action, and once for
 * the first period at the pledge's creation (`at` its time, `first`: the client shows that
 * attempt's payment action, so it is not mailed).
 */
export interface PledgePeriodInput {
  pledgeId: string;
  /** The time whose period is charged; the action's nominal time when absent. */
  at?: string | undefined;
  first?: boolean | undefined;
}

/** One attempt to charge a period: 0, then the dunning's retries. */
export interface PledgeAttempt {
  pledgeId: string;
  period: string;
  attempt: number;
  donationId: string;
}

/** What one action of a pledge's schedule did about its period. */
export interface PledgePeriodOutcome {
  /** The period the action's nominal time falls in, in the pledge's time zone (`2026-12`). */
  period: string;
  /**
   * `started`: the attempt's donation workflow was started (or found: a second action of the
   * period, a retry, a reset); `paid`: the period is paid (a later attempt found an earlier one
   * paid after all); `failed`: every attempt failed and the pledge was paused; `held`: the
   * attempt's donation waits for an operator; `paused`, `cancelled`: the pledge takes no
   * charge now; `refused`: the campaign or the provider takes no donation now (closed, closing).
   */
  outcome: 'started' | 'paid' | 'failed' | 'held' | 'paused' | 'cancelled' | 'refused';
  donationId: string | undefined;
  /** The attempt this outcome is about. */
  attempt: number;
}

/**
 * How an attempt's donation ended: paid; failed with a retry left (after `retryInMs`); failed
 * with none left (the pledge is paused and the donor told); or held for an operator (the
 * donation is in review, or its workflow failed: money may have moved, so nothing is retried).
 */
export type PledgeAttemptEnd =
  | { outcome: 'paid' | 'failed' }
  | { outcome: 'retry'; retryInMs: number }
  | { outcome: 'held'; status: DonationStatus | undefined };

/** One schedule per pledge: its actions are the pledge's periods. */
export function pledgeScheduleId(pledgeId: string): string {
  return `pledge-${pledgeId}`;
}

/** The period workflows' ID; the schedule appends each action's time to it. */
export function pledgePeriodWorkflowId(pledgeId: string): string {
  return `pledge-period-${pledgeId}`;
}

/** The period workflow that follows the first period, charged at the pledge's creation. */
export function pledgeFirstPeriodWorkflowId(pledgeId: string): string {
  return `pledge-period-${pledgeId}-first`;
}

/**
 * The time of the schedule's action a workflow was started for (Temporal sets it on every
 * scheduled start): a manual trigger's is the trigger's time, so it charges the current period.
 */
export const ScheduledStartTimeAttribute = defineSearchAttributeKey(
  'TemporalScheduledStartTime',
  SearchAttributeType.DATETIME,
);
