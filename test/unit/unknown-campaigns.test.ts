import { UnknownCampaigns } from '../../src/campaigns/unknown-campaigns';

describe('UnknownCampaigns', () => {
  it('remembers a missing id until its time is up', () => {
    const unknown = new UnknownCampaigns(1_000);
    unknown.remember('a', 10_000);
    expect(unknown.has('a', 10_999)).toBe(true);
    expect(unknown.has('a', 11_000)).toBe(false);
    expect(unknown.has('b', 10_000)).toBe(false);
  });

  it('holds at most its bound, forgetting the oldest first', () => {
    const unknown = new UnknownCampaigns(1_000, 2);
    unknown.remember('a', 0);
    unknown.remember('b', 0);
    unknown.remember('c', 0);
    expect(['a', 'b', 'c'].map((id) => unknown.has(id, 1))).toEqual([false, true, true]);
  });
});
