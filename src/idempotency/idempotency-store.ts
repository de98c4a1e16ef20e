import { randomBytes } from 'node:crypto';
import { open } from 'lmdb';
import type { Database, RootDatabase } from 'lmdb';
import type {
  ClaimResult,
  CompletedRecord,
  IdempotencyRecord,
  InFlightRecord,
  StoreStats,
  StoredResponse,
  SweepResult,
} from './idempotency-record';

export interface IdempotencyStoreOptions {
  path: string;
  ttlSeconds: number;
  /** How long a claimant may hold IN_FLIGHT before a retry may take over. */
  leaseSeconds?: number;
  /**
   * How long past its lease an abandoned IN_FLIGHT record may still belong to a running
   * workflow; the sweeper keeps it that long. Defaults to one day.
   */
  inFlightGraceSeconds?: number;
  /** Injected for tests; milliseconds since the epoch. */
  now?: () => number;
  /** COMPLETED records kept decoded in this process for replays; the oldest go first. */
  completedCacheSize?: number;
}

type ExpiryKey = [number, string];

/**
 * The edge's idempotency records in an embedded LMDB environment. Several processes on one host
 * may open the same path: LMDB serializes their write transactions, so a claim is atomic across
 * processes.
 *
 * Layout: `records` maps the scoped key to its record; `expiry` is an ordered index
 * `[expiresAt, scopedKey]` so the sweeper reads only what has expired.
 *
 * Durability: a claim resolves once its transaction has committed and been flushed (lmdb-js
 * resolves a write after the commit, fsync included; the claims of one transaction share it).
 * A completion also awaits `flushed`, because the client has been told the outcome and a power
 * cut must not make it forget, whatever a later lmdb-js does. See docs/idempotency.md.
 */
export class IdempotencyStore {
  private readonly root: RootDatabase;
  private readonly records: Database<IdempotencyRecord, string>;
  private readonly expiry: Database<true, ExpiryKey>;
  private readonly ttlMs: number;
  private readonly leaseMs: number;
  private readonly graceMs: number;
  private readonly now: () => number;
  private readonly completed = new Map<string, CompletedRecord>();
  private readonly completedCacheSize: number;
  /** Claim ids are this store's random prefix and a counter: unique, and no entropy per claim. */
  private readonly claimIdPrefix = randomBytes(12).toString('base64url');
  private claimCount = 0;

  constructor(options: IdempotencyStoreOptions) {
    this.root = open({ path: options.path, maxDbs: 4 });
    // Records share msgpack structures: a claim encodes faster (docs/benchmarks.md). lmdb-js's
    // own object cache is deliberately off: it would serve this process's copy of a record that
    // another process has since changed (an IN_FLIGHT claim it completed), also inside write
    // transactions, and it slows every claim by a fifth. Only immutable records are cached.
    this.records = this.root.openDB<IdempotencyRecord, string>({
      name: 'records',
      sharedStructuresKey: Symbol.for('galang.idempotency.structures'),
    });
    this.expiry = this.root.openDB<true, ExpiryKey>({ name: 'expiry' });
    this.ttlMs = options.ttlSeconds * 1000;
    this.leaseMs = (options.leaseSeconds ?? 30) * 1000;
    this.graceMs = (options.inFlightGraceSeconds ?? 86_400) * 1000;
    this.now = options.now ?? Date.now;
    this.completedCacheSize = options.completedCacheSize ?? 10_000;
  }

  /**
   * The live record for a key; an expired one reads as absent whether or not it was swept.
   *
   * A COMPLETED record never changes until it expires (claims replace only expired records;
   * complete, release and take-over touch only IN_FLIGHT ones), whichever process writes: so
   * this process keeps the ones it read and answers replays of them without reading LMDB.
   */
  get(key: string): IdempotencyRecord | undefined {
    const now = this.now();
    const kept = this.completed.get(key);
    if (kept) {
      if (kept.expiresAt > now) return kept;
      this.completed.delete(key);
    }
    const record = this.records.get(key);
    if (!record || record.expiresAt <= now) return undefined;
    if (record.status === 'COMPLETED') this.keep(key, record);
    return record;
  }

  /**
   * Inserts an IN_FLIGHT record and its expiry entry in one conditional write, only if the key
   * is absent. An expired leftover is replaced inside one write transaction that re-reads it.
   */
  async claim(key: string, fingerprint: string, rawDigest = ''): Promise<ClaimResult> {
    const now = this.now();
    const record = this.newClaim(fingerprint, rawDigest, now);
    const inserted = await this.records.ifNoExists(key, () => {
      void this.records.put(key, record);
      void this.expiry.put([record.expiresAt, key], true);
    });
    if (inserted) return { outcome: 'claimed', claimId: record.owner.claimId };

    return this.records.transaction((): ClaimResult => {
      const existing = this.records.get(key);
      if (existing && existing.expiresAt > now) return { outcome: 'exists', record: existing };
      if (existing) void this.expiry.remove([existing.expiresAt, key]);
      void this.records.put(key, record);
      void this.expiry.put([record.expiresAt, key], true);
      return { outcome: 'claimed', claimId: record.owner.claimId };
    });
  }

  /**
   * Takes over a claim whose lease has passed, only if the record still is that stale claim:
   * of several retries racing for a dead claimant's key, exactly one wins. The winner must
   * re-attach to the work by its deterministic identity (the workflow ID), never assume that
   * nothing was started.
   */
  takeOver(key: string, staleClaimId: string): Promise<ClaimResult> {
    const now = this.now();
    return this.records.transaction((): ClaimResult => {
      const existing = this.records.get(key);
      if (
        existing?.status !== 'IN_FLIGHT' ||
        existing.owner.claimId !== staleClaimId ||
        existing.leaseUntil > now
      ) {
        return existing ? { outcome: 'exists', record: existing } : { outcome: 'lost' };
      }
      const claimId = this.nextClaimId();
      void this.records.put(key, {
        ...existing,
        owner: { pid: process.pid, claimId },
        leaseUntil: now + this.leaseMs,
      });
      return { outcome: 'claimed', claimId };
    });
  }

  /** Stores the final response, only if our claim still holds; waits for the flush to disk. */
  async complete(key: string, claimId: string, response: StoredResponse): Promise<boolean> {
    const done = await this.records.transaction(() => {
      const existing = this.records.get(key);
      if (existing?.status !== 'IN_FLIGHT' || existing.owner.claimId !== claimId) return false;
      const completed: CompletedRecord = {
        status: 'COMPLETED',
        fingerprint: existing.fingerprint,
        rawDigest: existing.rawDigest,
        owner: existing.owner,
        createdAt: existing.createdAt,
        expiresAt: existing.expiresAt,
        response,
      };
      void this.records.put(key, completed);
      return true;
    });
    if (done) await this.root.flushed;
    return done;
  }

  /** Drops our IN_FLIGHT claim so a retry can proceed; a newer claim is left untouched. */
  release(key: string, claimId: string): Promise<boolean> {
    return this.records.transaction(() => {
      const existing = this.records.get(key);
      if (existing?.status !== 'IN_FLIGHT' || existing.owner.claimId !== claimId) return false;
      void this.records.remove(key);
      void this.expiry.remove([existing.expiresAt, key]);
      return true;
    });
  }

  /**
   * Removes up to `batchSize` expired records, walking the expiry index from its oldest entry
   * up to now, so it never reads live data. One short write transaction per batch; nothing is
   * held between batches. An expired IN_FLIGHT record still within its grace is re-indexed at
   * the end of the grace instead of removed.
   */
  sweep(batchSize = 1_000): Promise<SweepResult> {
    const now = this.now();
    return this.records.transaction((): SweepResult => {
      let removed = 0;
      let deferred = 0;
      let seen = 0;
      for (const indexKey of this.expiry.getKeys({ end: [now], limit: batchSize })) {
        seen++;
        const [expiresAt, key] = indexKey;
        void this.expiry.remove(indexKey);
        const record = this.records.get(key);
        if (record?.expiresAt !== expiresAt) continue;
        const keepUntil = record.status === 'IN_FLIGHT' ? record.leaseUntil + this.graceMs : 0;
        if (keepUntil > now) {
          void this.records.put(key, { ...record, expiresAt: keepUntil });
          void this.expiry.put([keepUntil, key], true);
          deferred++;
        } else {
          void this.records.remove(key);
          removed++;
        }
      }
      return { removed, deferred, more: seen === batchSize };
    });
  }

  /** Sweeps until nothing expired remains; for the periodic sweeper. */
  async sweepAll(batchSize = 1_000): Promise<SweepResult> {
    const total: SweepResult = { removed: 0, deferred: 0, more: false };
    for (;;) {
      const batch = await this.sweep(batchSize);
      total.removed += batch.removed;
      total.deferred += batch.deferred;
      if (!batch.more) return total;
    }
  }

  /** Counts and sizes, for metrics, readiness and the benchmark; all O(1) reads. */
  stats(): StoreStats {
    const env = this.root.getStats() as {
      pageSize: number;
      lastPageNumber: number;
      mapSize: number;
    };
    return {
      records: this.records.getCount(),
      indexEntries: this.expiry.getCount(),
      usedBytes: (env.lastPageNumber + 1) * env.pageSize,
      mapBytes: env.mapSize,
    };
  }

  async close(): Promise<void> {
    await this.root.close();
  }

  private nextClaimId(): string {
    this.claimCount++;
    return `${this.claimIdPrefix}.${this.claimCount.toString(36)}`;
  }

  private keep(key: string, record: CompletedRecord): void {
    this.completed.set(key, record);
    if (this.completed.size > this.completedCacheSize) {
      const oldest = this.completed.keys().next();
      if (!oldest.done) this.completed.delete(oldest.value);
    }
  }

  private newClaim(fingerprint: string, rawDigest: string, now: number): InFlightRecord {
    return {
      status: 'IN_FLIGHT',
      fingerprint,
      rawDigest,
      owner: { pid: process.pid, claimId: this.nextClaimId() },
      createdAt: now,
      expiresAt: now + this.ttlMs,
      leaseUntil: now + this.leaseMs,
    };
  }
}
