import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { PledgeActivities } from '../activities/pledge-activities';
import { ScheduledStartTimeAttribute } from './contracts';
import type { PledgePeriodInput, PledgePeriodOutcome } from './contracts';
import { pledgeActivity } from './retry-policies';

const { chargePledgePeriod } = proxyActivities<PledgeActivities>(pledgeActivity);

/**
 * One action of a pledge's schedule: charges the period of the action's nominal time (a start
 * outside the schedule: of its own start). The period's donation is an ordinary donation
 * workflow of its own, whose ID derives from pledge and period: this run only starts it.
 */
export async function pledgePeriodWorkflow(input: PledgePeriodInput): Promise<PledgePeriodOutcome> {
  const info = workflowInfo();
  const at = info.typedSearchAttributes.get(ScheduledStartTimeAttribute) ?? info.startTime;
  return chargePledgePeriod({ pledgeId: input.pledgeId, at: at.toISOString() });
}
