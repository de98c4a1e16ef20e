import type { CachedProgress } from './progress-cache';

/** What `GET /v1/campaigns/:id/progress` answers. */
export interface ProgressView {
  campaignId: string;
  goalAmount: number;
  confirmedAmount: number;
  donationCount: number;
  /** Of the goal, floored to two decimals; may exceed 100. */
  percent: number;
  currency: string;
  updatedAt: string;
  /** True when the value may be behind: served while a refresh runs or a dependency is down. */
  stale: boolean;
}

/** A progress answer ready to send: serialized once, so a hot campaign costs no work per read. */
export interface ProgressAnswer {
  view: ProgressView;
  body: string;
  etag: string;
  cacheControl: string;
}

/**
 * Fresh answers may be kept a few seconds by browsers and CDNs (and served while they
 * revalidate); stale ones must be revalidated every time.
 */
const FRESH_CACHE_CONTROL = 'public, max-age=5, stale-while-revalidate=25';
const STALE_CACHE_CONTROL = 'no-cache';

export function progressAnswer(progress: CachedProgress, stale: boolean): ProgressAnswer {
  const view: ProgressView = {
    campaignId: progress.campaignId,
    goalAmount: progress.goalAmount,
    confirmedAmount: progress.confirmedAmount,
    donationCount: progress.donationCount,
    percent: Math.floor((progress.confirmedAmount * 10_000) / progress.goalAmount) / 100,
    currency: progress.currency,
    updatedAt: progress.updatedAt,
    stale,
  };
  return {
    view,
    body: JSON.stringify(view),
    // The version identifies the totals; the stale flag is part of the body, so of the tag too.
    etag: `"${progress.campaignId}.${String(progress.version)}${stale ? '.stale' : ''}"`,
    cacheControl: stale ? STALE_CACHE_CONTROL : FRESH_CACHE_CONTROL,
  };
}

/** Whether an `If-None-Match` header names this tag (weak comparison, RFC 9110 §13.1.2). */
export function matchesEtag(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
