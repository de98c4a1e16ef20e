import { open } from 'lmdb';
import type { Database, RootDatabase } from 'lmdb';
import type { IdempotencyRecord, StoreStats, SweepResult } from './idempotency-record';

type ExpiryKey = [number, string];

export interface RecordTableOptions {
  path: string;
  /**
   * Commits are not flushed to disk. Only for an environment in memory (tmpfs), where there is
   * no disk to flush to and a crash of the machine empties it instead of corrupting it.
   */
  noSync: boolean;
}

/**
 * One LMDB environment of the store: `records` maps the scoped key to its record; `expiry` is an
 * ordered index `[expiresAt, scopedKey]` so the sweeper reads only what has expired. Several
 * processes on one host may open the same path: LMDB serializes their write transactions.
 */
export class RecordTable {
  readonly root: RootDatabase;
  readonly records: Database<IdempotencyRecord, string>;
  private readonly expiry: Database<true, ExpiryKey>;

  constructor(options: RecordTableOptions) {
    this.root = open({ path: options.path, maxDbs: 4, noSync: options.noSync });
    // Records share msgpack structures, so each encodes without repeating its keys. lmdb-js's own
    // object cache stays off: it would serve this process's copy of a record that another process
    // has since changed (an IN_FLIGHT claim it completed), even inside write transactions.
    this.records = this.root.openDB<IdempotencyRecord, string>({
      name: 'records',
      sharedStructuresKey: Symbol.for('galang.idempotency.structures'),
    });
    this.expiry = this.root.openDB<true, ExpiryKey>({ name: 'expiry' });
  }

  /** The record as stored, expired or not. */
  get(key: string): IdempotencyRecord | undefined {
    return this.records.get(key);
  }

  /** A record and its expiry entry, in one conditional write: only if the key is absent. */
  insertIfAbsent(key: string, record: IdempotencyRecord): Promise<boolean> {
    return this.records.ifNoExists(key, () => {
      void this.records.put(key, record);
      void this.expiry.put([record.expiresAt, key], true);
    });
  }

  /** Within a write transaction: writes a record, replacing `previous` and its expiry entry. */
  put(key: string, record: IdempotencyRecord, previous?: IdempotencyRecord): void {
    if (previous && previous.expiresAt !== record.expiresAt) {
      void this.expiry.remove([previous.expiresAt, key]);
    }
    void this.records.put(key, record);
    void this.expiry.put([record.expiresAt, key], true);
  }

  /** Within a write transaction: removes a record and its expiry entry. */
  remove(key: string, record: IdempotencyRecord): void {
    void this.records.remove(key);
    void this.expiry.remove([record.expiresAt, key]);
  }

  /** One write transaction; the callback runs inside it, reads and writes atomically. */
  transaction<T>(work: () => T): Promise<T> {
    return this.records.transaction(work);
  }

  /** Reads from here on see every commit made so far, by any process. */
  refresh(): void {
    this.root.resetReadTxn();
  }

  /**
   * Removes up to `batchSize` expired records, walking the expiry index from its oldest entry
   * up to now, so it never reads live data. One short write transaction; nothing is held
   * afterwards. An expired IN_FLIGHT record is kept, re-indexed, until `keepInFlightUntil`
   * says it may go: its workflow may still be running.
   */
  sweep(
    now: number,
    batchSize: number,
    keepInFlightUntil: (record: IdempotencyRecord & { status: 'IN_FLIGHT' }) => number,
  ): Promise<SweepResult> {
    return this.transaction((): SweepResult => {
      let removed = 0;
      let deferred = 0;
      let seen = 0;
      for (const indexKey of this.expiry.getKeys({ end: [now], limit: batchSize })) {
        seen++;
        const [expiresAt, key] = indexKey;
        void this.expiry.remove(indexKey);
        const record = this.records.get(key);
        if (record?.expiresAt !== expiresAt) continue;
        const keepUntil = record.status === 'IN_FLIGHT' ? keepInFlightUntil(record) : 0;
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

  /** Counts and sizes; all O(1) reads. */
  stats(): Omit<StoreStats, 'claims' | 'claimsUsedBytes'> {
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

  close(): Promise<void> {
    return this.root.close();
  }
}
