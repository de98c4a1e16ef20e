import type { Redis } from 'ioredis';
import type { CampaignProgress } from './campaign-repository';

/** The cached shape of a campaign's progress; dates as ISO strings. */
export interface CachedProgress {
  campaignId: string;
  goalAmount: number;
  confirmedAmount: number;
  donationCount: number;
  currency: string;
  version: number;
  updatedAt: string;
}

export function progressCacheKey(campaignId: string): string {
  return `campaign:${campaignId}:progress`;
}

/**
 * Redis holds campaign progress only as a cache in front of `campaign_totals`; losing it loses
 * nothing. The client's key prefix keeps environments (and test runs) apart.
 */
export class ProgressCache {
  constructor(
    private readonly redis: Redis,
    private readonly ttlSeconds = 30,
  ) {}

  async get(campaignId: string): Promise<CachedProgress | undefined> {
    const raw = await this.redis.get(progressCacheKey(campaignId));
    return raw === null ? undefined : (JSON.parse(raw) as CachedProgress);
  }

  async set(progress: CampaignProgress): Promise<CachedProgress> {
    const value = toCachedProgress(progress);
    await this.redis.set(
      progressCacheKey(progress.id),
      JSON.stringify(value),
      'EX',
      this.ttlSeconds,
    );
    return value;
  }

  async invalidate(campaignId: string): Promise<void> {
    await this.redis.del(progressCacheKey(campaignId));
  }
}

/** The cached (and served) form of a campaign's progress. */
export function toCachedProgress(progress: CampaignProgress): CachedProgress {
  return {
    campaignId: progress.id,
    goalAmount: progress.goalAmount,
    confirmedAmount: progress.confirmedAmount,
    donationCount: progress.donationCount,
    currency: progress.currency,
    version: progress.version,
    updatedAt: progress.updatedAt.toISOString(),
  };
}
