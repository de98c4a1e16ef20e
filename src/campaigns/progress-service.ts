import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../errors/error-catalogue';
import type { CampaignRepository } from './campaign-repository';
import { toCachedProgress } from './progress-cache';
import type { CachedProgress, ProgressCache } from './progress-cache';

export interface ProgressView {
  campaignId: string;
  goalAmount: number;
  confirmedAmount: number;
  donationCount: number;
  /** Of the goal, floored to two decimals; may exceed 100. */
  percent: number;
  currency: string;
  updatedAt: string;
  stale: boolean;
}

/** Campaign progress read through the Redis cache; Postgres answers when Redis cannot. */
export class ProgressService {
  constructor(
    private readonly campaigns: CampaignRepository,
    private readonly cache: ProgressCache,
  ) {}

  async get(campaignId: string, log: FastifyBaseLogger): Promise<ProgressView> {
    const cached = await this.cache.get(campaignId).catch((error: unknown) => {
      log.warn({ err: error }, 'progress cache read failed; reading Postgres');
      return undefined;
    });
    if (cached) return view(cached);

    const progress = await this.campaigns.progress(campaignId);
    if (!progress) throw new AppError('campaign-not-found');
    const fresh = await this.cache.set(progress).catch((error: unknown) => {
      log.warn({ err: error }, 'progress cache write failed');
      return undefined;
    });
    return view(fresh ?? toCachedProgress(progress));
  }
}

function view(progress: CachedProgress): ProgressView {
  return {
    campaignId: progress.campaignId,
    goalAmount: progress.goalAmount,
    confirmedAmount: progress.confirmedAmount,
    donationCount: progress.donationCount,
    percent: Math.floor((progress.confirmedAmount * 10_000) / progress.goalAmount) / 100,
    currency: progress.currency,
    updatedAt: progress.updatedAt,
    stale: false,
  };
}
