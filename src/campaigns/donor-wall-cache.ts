import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/** A wall page ready to send, as Redis keeps it. */
export interface CachedWallPage {
  body: string;
  etag: string;
}

/** The campaign's current generation of wall pages: replacing it drops them all at once. */
export function wallGenerationKey(campaignId: string): string {
  return `campaign:${campaignId}:wall`;
}

/** A page's key without its generation; the read script appends the current one. */
function pageKeyBase(campaignId: string, page: string): string {
  return `campaign:${campaignId}:wall:page:${page}`;
}

/**
 * Reads the generation (starting one when there is none) and that generation's page in one
 * round trip. A generation is random, never a counter, so one Redis evicted and recreated
 * cannot meet an old page again.
 */
const READ_PAGE = `
local gen = redis.call('GET', KEYS[1])
if not gen then
  gen = ARGV[1]
  redis.call('SET', KEYS[1], gen)
end
return {gen, redis.call('GET', KEYS[2] .. ':' .. gen)}`;

/**
 * Redis holds built wall pages only as a cache; losing it loses nothing. Pages are keyed by the
 * campaign's generation, so invalidating (a donation confirmed or reversed, a message hidden)
 * is one SET that every process sees, and a page built from Postgres before the change lands
 * under the old generation, where no one reads it again: a rebuild cannot put back what the
 * invalidation dropped. Old pages go with their TTL.
 */
export class DonorWallCache {
  constructor(
    private readonly redis: Redis,
    private readonly ttlSeconds = 60,
  ) {}

  /** The current generation and its page, when cached. */
  async get(
    campaignId: string,
    page: string,
  ): Promise<{ generation: string; page: CachedWallPage | undefined }> {
    const [generation, raw] = (await this.redis.eval(
      READ_PAGE,
      2,
      wallGenerationKey(campaignId),
      pageKeyBase(campaignId, page),
      randomUUID(),
    )) as [string, string | null];
    return {
      generation,
      page: raw === null ? undefined : (JSON.parse(raw) as CachedWallPage),
    };
  }

  /** Stores a page under the generation it was read in. */
  async set(
    campaignId: string,
    page: string,
    generation: string,
    value: CachedWallPage,
  ): Promise<void> {
    await this.redis.set(
      `${pageKeyBase(campaignId, page)}:${generation}`,
      JSON.stringify(value),
      'EX',
      this.ttlSeconds,
    );
  }

  /** Drops every cached page of the campaign: readers rebuild under a new generation. */
  async invalidate(campaignId: string): Promise<void> {
    await this.redis.set(wallGenerationKey(campaignId), randomUUID());
  }

  /**
   * Invalidates, then deletes the pages of every generation at once instead of leaving the old
   * ones to their TTL: after an erasure, no copy of the donor's name may stay in Redis.
   */
  async purge(campaignId: string): Promise<void> {
    await this.invalidate(campaignId);
    // SCAN's pattern and its answers carry the client's key prefix; DEL adds it again.
    const prefix = this.redis.options.keyPrefix ?? '';
    const pattern = `${prefix}${pageKeyBase(campaignId, '*')}`;
    for await (const keys of this.redis.scanStream({ match: pattern, count: 500 })) {
      const names = (keys as string[]).map((key) => key.slice(prefix.length));
      if (names.length > 0) await this.redis.del(...names);
    }
  }
}
