import { defaultClaimsPath, isMemoryBacked, prepareClaimsDir } from './claims-location';
import type { InFlightRecord, StoreStats, SweepResult } from './idempotency-record';
import { RecordTable } from './record-table';

/**
 * The idempotency store's two LMDB environments and their upkeep: the claims (IN_FLIGHT, in
 * shared memory unless told otherwise, commits not flushed) and the answers (COMPLETED, on
 * disk, every commit flushed). Whether both can write, sweeping what expired, their sizes.
 */
export class StoreEnvironments {
  /** Whether claims live in memory (unflushed) rather than beside the answers on disk. */
  readonly claimsInMemory: boolean;
  readonly answers: RecordTable;
  readonly claims: RecordTable;

  constructor(path: string, claimsPath = defaultClaimsPath(path)) {
    prepareClaimsDir(claimsPath);
    this.claimsInMemory = isMemoryBacked(claimsPath);
    this.answers = new RecordTable({ name: 'answers', path, noSync: false, durable: true });
    this.claims = new RecordTable({
      name: 'claims',
      path: claimsPath,
      noSync: this.claimsInMemory,
    });
  }

  /** False after a commit failed in either, until one succeeds or {@link probeWrites} sees one. */
  get writable(): boolean {
    return !this.answers.writeFailing && !this.claims.writeFailing;
  }

  /** Tries a small write in each environment whose last commit failed; then {@link writable}. */
  async probeWrites(): Promise<boolean> {
    for (const table of [this.answers, this.claims]) {
      if (table.writeFailing) await table.probeWrite();
    }
    return this.writable;
  }

  /**
   * Removes up to `batchSize` expired answers and as many expired claims, walking each expiry
   * index from its oldest entry, one short write transaction each. An expired claim still
   * within `graceMs` past its lease is re-indexed at the end of the grace instead of removed.
   */
  async sweep(now: number, batchSize: number, graceMs: number): Promise<SweepResult> {
    const keepUntil = (record: InFlightRecord) => record.leaseUntil + graceMs;
    const answers = await this.answers.sweep(now, batchSize, keepUntil);
    const claims = await this.claims.sweep(now, batchSize, keepUntil);
    return {
      removed: answers.removed + claims.removed,
      deferred: answers.deferred + claims.deferred,
      more: answers.more || claims.more,
    };
  }

  /** Counts and sizes of both environments together, for metrics, readiness and benchmarks. */
  stats(): StoreStats {
    const answers = this.answers.stats();
    const claims = this.claims.stats();
    return {
      records: answers.records + claims.records,
      indexEntries: answers.indexEntries + claims.indexEntries,
      usedBytes: answers.usedBytes + claims.usedBytes,
      mapBytes: answers.mapBytes + claims.mapBytes,
      claims: claims.records,
      claimsUsedBytes: claims.usedBytes,
    };
  }

  async close(): Promise<void> {
    await Promise.all([this.answers.close(), this.claims.close()]);
  }
}
