import { log, proxyActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { PledgeActivities } from '../activities/pledge-activities';
import { ScheduledStartTimeAttribute } from './contracts';
import type { PledgeAttempt, PledgePeriodInput, PledgePeriodOutcome } from './contracts';
import { pledgeActivity, pledgeWaitActivity } from './retry-policies';

const { chargePledgePeriod, noticePledgeDonor, pausePledgeForFailure } =
  proxyActivities<PledgeActivities>(pledgeActivity);
const { settlePledgeAttempt } = proxyActivities<PledgeActivities>(pledgeWaitActivity);

/**
 * One period of a pledge: charges the period of the action's nominal time (or of `at`), sends
 * the donor the payment action when the period needs them, waits for the attempt's donation to
 * end, and after a failure tries again on the dunning's delays; when none is left, pauses the
 * pledge and tells the donor. Each attempt is an ordinary donation whose ID derives from
 * pledge, period and attempt: this run only starts and follows them, so a second action, a
 * retry or a reset charges nothing twice.
 */
export async function pledgePeriodWorkflow(input: PledgePeriodInput): Promise<PledgePeriodOutcome> {
  const info = workflowInfo();
  const at =
    input.at ??
    (info.typedSearchAttributes.get(ScheduledStartTimeAttribute) ?? info.startTime).toISOString();
  for (let attempt = 0; ; attempt++) {
    const charged = await chargePledgePeriod({ pledgeId: input.pledgeId, at, attempt });
    if (charged.outcome !== 'started' || charged.donationId === undefined) return charged;
    const current: PledgeAttempt = {
      pledgeId: input.pledgeId,
      period: charged.period,
      attempt,
      donationId: charged.donationId,
    };
    // The first attempt of the first period is shown to the donor by the client that asked.
    if (!(input.first && attempt === 0)) {
      // An e-mail that cannot go (an address the relay refuses) must not stop the dunning.
      await noticePledgeDonor(current).catch((error: unknown) => {
        log.warn('the period notice was not sent', { error: String(error) });
      });
    }
    const ended = await settlePledgeAttempt(current);
    if (ended.outcome === 'retry') {
      await sleep(ended.retryInMs);
      continue;
    }
    if (ended.outcome === 'failed') await pausePledgeForFailure(current);
    return { ...charged, outcome: ended.outcome };
  }
}
