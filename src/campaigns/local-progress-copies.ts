import { progressAnswer } from './progress-answer';
import type { ProgressAnswer } from './progress-answer';
import type { CachedProgress } from './progress-cache';

export interface LocalCopy {
  value: CachedProgress;
  answer: ProgressAnswer;
  /** When this process took the copy; 0 once an invalidation arrived. */
  storedAt: number;
}

/**
 * This process's own copies of campaign progress: the answer to most reads of a hot campaign,
 * and the last known value when both Redis and Postgres are out. Bounded: the oldest copy goes
 * first once `maxEntries` campaigns are held.
 */
export class LocalProgressCopies {
  private readonly copies = new Map<string, LocalCopy>();

  constructor(private readonly maxEntries = 10_000) {}

  get(campaignId: string): LocalCopy | undefined {
    return this.copies.get(campaignId);
  }

  /** Keeps a value unless this process already holds a newer one; returns what it holds. */
  remember(value: CachedProgress, now: number): LocalCopy {
    const held = this.copies.get(value.campaignId);
    if (held && held.value.version > value.version) return held;
    const copy = { value, answer: progressAnswer(value, false), storedAt: now };
    this.copies.delete(value.campaignId);
    this.copies.set(value.campaignId, copy);
    if (this.copies.size > this.maxEntries) {
      const oldest = this.copies.keys().next();
      if (!oldest.done) this.copies.delete(oldest.value);
    }
    return copy;
  }

  /** The next read asks Redis again; the copy stays as the last known value. */
  expire(campaignId: string): void {
    const held = this.copies.get(campaignId);
    if (held) held.storedAt = 0;
  }
}
