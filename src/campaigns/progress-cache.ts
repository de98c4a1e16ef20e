import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { closeRedis } from '../db/redis-connection';
import type { CampaignProgress } from './campaign-repository';

/** The cached shape of a campaign's progress; dates as ISO strings. */
export interface CachedProgress {
  campaignId: string;
  goalAmount: number;
  confirmedAmount: number;
  donationCount: number;
  currency: string;
  /** `campaign_totals.version`: every ledger write bumps it, so a newer value has a larger one. */
  version: number;
  updatedAt: string;
  /** Epoch ms after which the value is served as stale while one caller refreshes it. */
  freshUntil: number;
}

export interface ProgressCacheOptions {
  ttlSeconds: number;
  staleSeconds: number;
}

export function progressCacheKey(campaignId: string): string {
  return `campaign:${campaignId}:progress`;
}

function lockKey(campaignId: string): string {
  return `campaign:${campaignId}:progress:lock`;
}

/**
 * Writes only if the cached value is not newer, so a rebuild that read Postgres before a
 * confirmation cannot put back the total the confirmation replaced.
 */
const WRITE_IF_NOT_OLDER = `
local current = redis.call('GET', KEYS[1])
if current then
  local ok, decoded = pcall(cjson.decode, current)
  if ok and type(decoded) == 'table' and tonumber(decoded.version) and
     tonumber(decoded.version) > tonumber(ARGV[1]) then
    return 0
  end
end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`;

/** Deletes the lock only while it is still ours: a rebuild that overran it frees nobody else's. */
const RELEASE_LOCK = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

/**
 * Redis holds campaign progress only as a cache in front of `campaign_totals`; losing it loses
 * nothing. Every process of every kind shares it: the worker refreshes it after a ledger commit,
 * the API reads it. The client's key prefix keeps environments (and test runs) apart; the
 * invalidation channel carries the same prefix because Redis does not prefix channels.
 */
export class ProgressCache {
  readonly channel: string;

  constructor(
    private readonly redis: Redis,
    private readonly options: ProgressCacheOptions = { ttlSeconds: 30, staleSeconds: 300 },
  ) {
    this.channel = `${redis.options.keyPrefix ?? ''}campaign-progress-invalidated`;
  }

  async get(campaignId: string): Promise<CachedProgress | undefined> {
    const raw = await this.redis.get(progressCacheKey(campaignId));
    return raw === null ? undefined : (JSON.parse(raw) as CachedProgress);
  }

  /**
   * Stores a value read from Postgres unless a newer one is cached. The fresh period is jittered
   * so that campaigns cached together do not all expire in the same second.
   */
  async set(progress: CampaignProgress, now = Date.now()): Promise<CachedProgress> {
    const ttlMs = this.options.ttlSeconds * 1000 * (0.9 + Math.random() * 0.2);
    const value = toCachedProgress(progress, Math.round(now + ttlMs));
    const keepMs = Math.round(ttlMs + this.options.staleSeconds * 1000);
    await this.redis.eval(
      WRITE_IF_NOT_OLDER,
      1,
      progressCacheKey(progress.id),
      String(value.version),
      JSON.stringify(value),
      String(keepMs),
    );
    return value;
  }

  /**
   * Replaces the cached value after a ledger commit and tells every API process to drop its own
   * copy. Writing the new value instead of deleting the old one spares a popular campaign a
   * burst of misses after every confirmed donation.
   */
  async refresh(progress: CampaignProgress): Promise<void> {
    await this.set(progress);
    await this.redis.publish(this.channel, progress.id);
  }

  /** Drops the value (a campaign's details changed); readers rebuild it on their next miss. */
  async invalidate(campaignId: string): Promise<void> {
    await this.redis.del(progressCacheKey(campaignId));
    await this.redis.publish(this.channel, campaignId);
  }

  /** A short lock so one caller across all processes rebuilds a missing or stale value. */
  async tryLock(campaignId: string, ttlMs: number): Promise<string | undefined> {
    const token = randomUUID();
    const ok = await this.redis.set(lockKey(campaignId), token, 'PX', ttlMs, 'NX');
    return ok === 'OK' ? token : undefined;
  }

  async unlock(campaignId: string, token: string): Promise<void> {
    await this.redis.eval(RELEASE_LOCK, 1, lockKey(campaignId), token);
  }

  /**
   * Listens for invalidations on a connection of its own (a subscribed connection can do
   * nothing else). ioredis subscribes again after a reconnect; until then the in-process copies
   * simply live out their short TTL. Returns the function that stops listening.
   */
  subscribe(onInvalidated: (campaignId: string) => void): () => Promise<void> {
    const subscriber = this.redis.duplicate();
    subscriber.on('error', () => undefined);
    subscriber.on('message', (_channel: string, campaignId: string) => {
      onInvalidated(campaignId);
    });
    subscriber.subscribe(this.channel).catch(() => undefined);
    return () => closeRedis(subscriber);
  }
}

/** The cached form of a campaign's progress. */
export function toCachedProgress(progress: CampaignProgress, freshUntil: number): CachedProgress {
  return {
    campaignId: progress.id,
    goalAmount: progress.goalAmount,
    confirmedAmount: progress.confirmedAmount,
    donationCount: progress.donationCount,
    currency: progress.currency,
    version: progress.version,
    updatedAt: progress.updatedAt.toISOString(),
    freshUntil,
  };
}
