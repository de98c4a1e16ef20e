import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { AppError } from '../errors/error-catalogue';
import { CircuitBreaker } from '../resilience/circuit-breaker';
import type { CachedWallPage, DonorWallCache } from './donor-wall-cache';
import type { DonorWallRepository, WallRow } from './donor-wall-repository';
import type { MessageHidden, WallEntry, WallView } from './donor-wall-schemas';
import { UnknownCampaigns } from './unknown-campaigns';
import { decodeWallCursor, encodeWallCursor } from './wall-cursor';
import { withoutLinks } from './wall-text';

export interface DonorWallServiceOptions {
  repository: DonorWallRepository;
  cache: DonorWallCache;
  log: FastifyBaseLogger;
}

export const DEFAULT_WALL_LIMIT = 20;

/** As the progress: browsers and CDNs may keep a page a few seconds. */
export const WALL_CACHE_CONTROL = 'public, max-age=5, stale-while-revalidate=25';

/**
 * The donor wall: a campaign's confirmed donations, newest first, in keyset pages built once
 * from public columns and kept in Redis until a confirmation, a reversal or a hidden message
 * replaces the campaign's generation. Concurrent misses of a page in this process share one
 * Postgres read; Redis failing opens a breaker and pages are read from Postgres directly.
 */
export class DonorWallService {
  private readonly unknown = new UnknownCampaigns();
  private readonly building = new Map<string, Promise<CachedWallPage>>();
  private readonly breaker: CircuitBreaker;

  constructor(private readonly options: DonorWallServiceOptions) {
    this.breaker = new CircuitBreaker({
      failureThreshold: 3,
      cooldownMs: 5_000,
      timeoutMs: 250,
      onStateChange: (state) => {
        options.log.warn({ state }, 'donor wall cache circuit breaker');
      },
    });
  }

  /** One page of the wall, serialized, with its ETag. */
  async page(campaignId: string, limit: number, cursorText?: string): Promise<CachedWallPage> {
    const cursor = cursorText === undefined ? undefined : decodeWallCursor(cursorText);
    if (this.unknown.has(campaignId, Date.now())) throw new AppError('campaign-not-found');
    const pageId = `${String(limit)}:${cursorText ?? 'first'}`;
    let generation: string | undefined;
    try {
      const cached = await this.breaker.call(() => this.options.cache.get(campaignId, pageId));
      if (cached.page) return cached.page;
      generation = cached.generation;
    } catch {
      generation = undefined;
    }
    const key = `${campaignId}\u0000${pageId}\u0000${generation ?? ''}`;
    let pending = this.building.get(key);
    if (!pending) {
      pending = this.build(campaignId, limit, cursor).finally(() => this.building.delete(key));
      this.building.set(key, pending);
    }
    const page = await pending;
    if (generation !== undefined) {
      const stored = generation;
      await this.breaker
        .call(() => this.options.cache.set(campaignId, pageId, stored, page))
        .catch(() => undefined);
    }
    return page;
  }

  /**
   * Hides a donation's message from the wall (idempotent) and drops the campaign's cached
   * pages. If they cannot be dropped the answer is a 503: the message is hidden in Postgres,
   * and the retry the operator makes drops them.
   */
  async hideMessage(donationId: string): Promise<MessageHidden> {
    const hidden = await this.options.repository.hideMessage(donationId);
    if (!hidden) throw new AppError('donation-not-found');
    try {
      await this.options.cache.invalidate(hidden.campaignId);
    } catch (error) {
      throw new AppError('service-unavailable', {
        retryAfter: 2,
        detail: "The message is hidden; the wall's cached pages could not be dropped: retry.",
        cause: error,
      });
    }
    return { donationId, messageHidden: true, hiddenAt: hidden.hiddenAt.toISOString() };
  }

  private async build(
    campaignId: string,
    limit: number,
    cursor: ReturnType<typeof decodeWallCursor> | undefined,
  ): Promise<CachedWallPage> {
    const { repository } = this.options;
    const campaign = await repository.campaign(campaignId);
    if (!campaign) {
      this.unknown.remember(campaignId, Date.now());
      throw new AppError('campaign-not-found');
    }
    const rows = await repository.page(campaignId, campaign.hideAmounts, limit + 1, cursor);
    const shown = rows.slice(0, limit);
    const last = shown.at(-1);
    const view: WallView = {
      campaignId,
      currency: campaign.currency,
      hideAmounts: campaign.hideAmounts,
      donations: shown.map(toEntry),
      next:
        rows.length > limit && last
          ? encodeWallCursor({ confirmedAtMicros: last.confirmedAtMicros, id: last.id })
          : null,
    };
    const body = JSON.stringify(view);
    const digest = createHash('sha256').update(body).digest('base64url').slice(0, 27);
    return { body, etag: `"wall-${digest}"` };
  }
}

/** A row as the public sees it: built field by field, so nothing else can slip in. */
function toEntry(row: WallRow): WallEntry {
  return {
    name: withoutLinks(row.publicName),
    amount: row.amount,
    message: row.message === null ? null : withoutLinks(row.message),
    confirmedAt: row.confirmedAt.toISOString(),
  };
}
