import { randomBytes } from 'node:crypto';
import { AppError } from '../errors/error-catalogue';
import { isSupportedCurrency } from '../money/currency';
import { acceptsDonations } from './campaign-repository';
import type { CampaignProgress, CampaignRepository } from './campaign-repository';
import type { CampaignView, CreateCampaignBody } from './campaign-schemas';

/** The operators' side of campaigns: create, read the truth from Postgres, close. */
export class CampaignService {
  constructor(private readonly campaigns: CampaignRepository) {}

  /**
   * Creates a campaign. Asking again for one that exists with the same details answers it
   * (`created: false`), so an operator's retry without an Idempotency-Key is harmless; the same
   * id with other details is a conflict.
   */
  async create(
    request: CreateCampaignBody,
    now = new Date(),
  ): Promise<{ campaign: CampaignView; created: boolean }> {
    if (!isSupportedCurrency(request.currency)) {
      throw new AppError('unsupported-currency', {
        detail: `${request.currency} is not accepted.`,
      });
    }
    const endsAt = request.endsAt === undefined ? null : new Date(request.endsAt);
    if (endsAt && endsAt <= now) {
      throw new AppError('validation-failed', { detail: 'endsAt must be in the future.' });
    }
    const id = request.id ?? `cmp_${randomBytes(10).toString('hex')}`;
    const details = {
      id,
      title: request.title,
      goalAmount: request.goalAmount,
      currency: request.currency,
      endsAt,
      hideAmounts: request.hideAmounts ?? false,
    };
    const created = await this.campaigns.create(details);
    const campaign = await this.get(id);
    if (
      !created &&
      (campaign.title !== details.title ||
        campaign.goalAmount !== details.goalAmount ||
        campaign.currency !== details.currency ||
        campaign.hideAmounts !== details.hideAmounts ||
        campaign.endsAt !== (endsAt?.toISOString() ?? null))
    ) {
      throw new AppError('campaign-exists', {
        detail: `Campaign ${id} exists with other details.`,
      });
    }
    return { campaign, created };
  }

  async get(id: string, now = new Date()): Promise<CampaignView> {
    const progress = await this.campaigns.progress(id);
    if (!progress) throw new AppError('campaign-not-found');
    return toView(progress, now);
  }

  /** Closing a closed campaign is not an error: the operator gets what they asked for. */
  async close(id: string): Promise<CampaignView> {
    await this.campaigns.close(id);
    return this.get(id);
  }
}

function toView(progress: CampaignProgress, now: Date): CampaignView {
  return {
    id: progress.id,
    title: progress.title,
    goalAmount: progress.goalAmount,
    currency: progress.currency,
    status: progress.status,
    endsAt: progress.endsAt?.toISOString() ?? null,
    acceptingDonations: acceptsDonations(progress, now),
    hideAmounts: progress.hideAmounts,
    confirmedAmount: progress.confirmedAmount,
    donationCount: progress.donationCount,
    updatedAt: progress.updatedAt.toISOString(),
  };
}
