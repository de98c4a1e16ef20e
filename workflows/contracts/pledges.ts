import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** A pledge's period workflow, started by the pledge's schedule at every action. */
export interface PledgePeriodInput {
  pledgeId: string;
}

/** What one action of a pledge's schedule did about its period. */
export interface PledgePeriodOutcome {
  /** The period the action's nominal time falls in, in the pledge's time zone (`2026-12`). */
  period: string;
  /**
   * `started`: the period's donation workflow was started (or found: a second action of the
   * period, a retry, a reset); `paused`, `cancelled`: the pledge takes no charge now;
   * `refused`: the campaign or the provider takes no donation now (closed, closing).
   */
  outcome: 'started' | 'paused' | 'cancelled' | 'refused';
  donationId: string | undefined;
}

/** One schedule per pledge: its actions are the pledge's periods. */
export function pledgeScheduleId(pledgeId: string): string {
  return `pledge-${pledgeId}`;
}

/** The period workflows' ID; the schedule appends each action's time to it. */
export function pledgePeriodWorkflowId(pledgeId: string): string {
  return `pledge-period-${pledgeId}`;
}

/**
 * The time of the schedule's action a workflow was started for (Temporal sets it on every
 * scheduled start): a manual trigger's is the trigger's time, so it charges the current period.
 */
export const ScheduledStartTimeAttribute = defineSearchAttributeKey(
  'TemporalScheduledStartTime',
  SearchAttributeType.DATETIME,
);
