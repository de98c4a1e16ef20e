import type { Pledge, PledgePeriod } from './pledge-repository';
import type { PledgeView } from './pledge-schemas';

export type { PledgeView } from './pledge-schemas';

/** How the API shows a pledge: its terms, its last periods, and the donor's link. */
export function pledgeView(
  pledge: Pledge,
  periods: PledgePeriod[],
  manageLink: string,
): PledgeView {
  return {
    id: pledge.id,
    status: pledge.status,
    campaignId: pledge.campaignId,
    amount: pledge.amount,
    currency: pledge.currency,
    interval: pledge.interval,
    dayOfPeriod: pledge.dayOfPeriod,
    timeZone: pledge.timeZone,
    paymentMethod: pledge.paymentMethod,
    donor: { anonymous: pledge.donor.anonymous },
    createdAt: pledge.createdAt.toISOString(),
    periods: periods.map((period) => ({
      period: period.period,
      attempt: period.attempt,
      donationId: period.donationId,
      amount: period.amount,
      status: period.status,
      startedAt: period.startedAt.toISOString(),
    })),
    links: {
      self: `/v1/pledges/${pledge.id}`,
      manage: manageLink,
    },
  };
}
