/**
 * Campaign ids Postgres just said do not exist, remembered for a few seconds: a page or a
 * script asking again and again for a missing campaign costs this process a map lookup instead
 * of Redis and a Postgres query each time. Short, because a campaign created meanwhile answers
 * 404 until its entry expires; bounded, oldest first, so random ids cannot grow it.
 */
export class UnknownCampaigns {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly ttlMs = 2_000,
    private readonly maxEntries = 10_000,
  ) {}

  has(campaignId: string, now: number): boolean {
    const until = this.until.get(campaignId);
    if (until === undefined) return false;
    if (until > now) return true;
    this.until.delete(campaignId);
    return false;
  }

  remember(campaignId: string, now: number): void {
    this.until.delete(campaignId);
    this.until.set(campaignId, now + this.ttlMs);
    if (this.until.size > this.maxEntries) {
      const oldest = this.until.keys().next();
      if (!oldest.done) this.until.delete(oldest.value);
    }
  }
}
