import type { DonorWallCache } from '../campaigns/donor-wall-cache';
import { AppError } from '../errors/error-catalogue';
import type { PledgeSchedules } from '../pledges/pledge-schedules';
import type { ErasureRepository, ErasureTarget } from './erasure-repository';
import type { ErasureDone } from './erasure-schemas';

/**
 * A donor's erasure (UU PDP 27/2022, GDPR art. 17): their fields in Postgres become a
 * pseudonym, their pledges are cancelled, the raw bodies of their webhooks are purged, and
 * every cached wall page of their campaigns is deleted. Temporal holds nothing to erase: a workflow's input never carries the
 * donor's data. Erasing twice is harmless.
 */
export class DonorErasure {
  constructor(
    private readonly repository: ErasureRepository,
    private readonly wallCache: DonorWallCache,
    private readonly pledgeSchedules: Pick<PledgeSchedules, 'cancel'>,
  ) {}

  async erase(target: ErasureTarget): Promise<ErasureDone> {
    const result = await this.repository.erase(target);
    try {
      for (const campaignId of result.campaignIds) await this.wallCache.purge(campaignId);
      // Their pledges are cancelled in Postgres, which every period's action reads first.
      for (const pledgeId of result.pledgeIds) await this.pledgeSchedules.cancel(pledgeId);
    } catch (error) {
      throw new AppError('service-unavailable', {
        retryAfter: 2,
        detail:
          'The donor is erased in Postgres; cached wall pages or pledge schedules could not be ' +
          'removed: retry the erasure.',
        cause: error,
      });
    }
    return {
      erasedDonations: result.donationIds.length,
      webhookBodiesPurged: result.bodiesPurged,
      erasedAt: new Date().toISOString(),
    };
  }
}
