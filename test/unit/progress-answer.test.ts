import { matchesEtag, progressAnswer } from '../../src/campaigns/progress-answer';
import { LocalProgressCopies } from '../../src/campaigns/local-progress-copies';
import type { CachedProgress } from '../../src/campaigns/progress-cache';

const value = (version: number, confirmedAmount = 0): CachedProgress => ({
  campaignId: 'c1',
  goalAmount: 300,
  confirmedAmount,
  donationCount: version,
  currency: 'IDR',
  version,
  updatedAt: '2026-11-30T00:00:00.000Z',
  freshUntil: 0,
});

describe('progress answers', () => {
  it('floors the percent, tags by version and stale flag', () => {
    const fresh = progressAnswer(value(4, 200), false);
    expect(fresh.view.percent).toBe(66.66);
    expect(JSON.parse(fresh.body)).toEqual(fresh.view);
    expect(fresh.etag).toBe('"c1.4"');
    const stale = progressAnswer(value(4, 200), true);
    expect(stale.etag).toBe('"c1.4.stale"');
    expect(stale.cacheControl).toBe('no-cache');
    expect(progressAnswer(value(1, 600), false).view.percent).toBe(200);
  });

  it('matches If-None-Match lists, weak tags and *', () => {
    expect(matchesEtag(undefined, '"c1.4"')).toBe(false);
    expect(matchesEtag('"c1.3", W/"c1.4"', '"c1.4"')).toBe(true);
    expect(matchesEtag('"c1.3"', '"c1.4"')).toBe(false);
    expect(matchesEtag(' * ', '"c1.4"')).toBe(true);
  });

  it('keeps the newest copy per campaign and forgets the oldest campaign beyond its bound', () => {
    const copies = new LocalProgressCopies(2);
    copies.remember(value(5), 1);
    expect(copies.remember(value(4), 2).value.version).toBe(5);
    copies.expire('c1');
    expect(copies.get('c1')?.storedAt).toBe(0);
    copies.remember({ ...value(1), campaignId: 'c2' }, 3);
    copies.remember({ ...value(1), campaignId: 'c3' }, 4);
    expect(copies.get('c1')).toBeUndefined();
    expect(copies.get('c3')).toBeDefined();
  });
});
