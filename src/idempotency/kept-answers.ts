import type { CompletedRecord } from './idempotency-record';

/** Request bodies longer than this are not remembered beside a kept answer. */
const REMEMBERED_BYTES_MAX = 4096;

/** A COMPLETED record this process keeps for replays, and request bytes seen to match it. */
interface KeptAnswer {
  record: CompletedRecord;
  knownBytes?: string;
}

/**
 * The COMPLETED records this process has read, decoded, for replays without an LMDB read: an
 * answer never changes until it expires. Bounded; the oldest kept goes first.
 */
export class KeptAnswers {
  private readonly answers = new Map<string, KeptAnswer>();

  constructor(private readonly capacity: number) {}

  /** The kept answer of `key` while it is live; an expired one is dropped. */
  live(key: string, now: number): CompletedRecord | undefined {
    const kept = this.answers.get(key);
    if (!kept) return undefined;
    if (kept.record.expiresAt > now) return kept.record;
    this.answers.delete(key);
    return undefined;
  }

  keep(key: string, record: CompletedRecord): void {
    this.answers.set(key, { record });
    if (this.answers.size > this.capacity) {
      const oldest = this.answers.keys().next();
      if (!oldest.done) this.answers.delete(oldest.value);
    }
  }

  /** Request bytes seen to match the answer kept for `key`, if any. */
  knownBytes(key: string): string | undefined {
    return this.answers.get(key)?.knownBytes;
  }

  /**
   * Remembers bytes that matched the kept answer of `key`, so the next retry with them is
   * recognized by a string comparison. Small bodies only: they stay in this process's memory.
   */
  rememberBytes(key: string, bytes: string): void {
    const kept = this.answers.get(key);
    if (kept && bytes.length <= REMEMBERED_BYTES_MAX) kept.knownBytes = bytes;
  }
}
