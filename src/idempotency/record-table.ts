import { open } from 'lmdb';
import type { Database, RootDatabase, RootDatabaseOptionsWithPath } from 'lmdb';
import type { IdempotencyRecord, StoreStats, SweepResult } from './idempotency-record';
import { NoRoomError, hasRoom } from './disk-room';
import { StoreWriteError, commitFailure } from './store-write-error';

type ExpiryKey = [number, string];

export interface RecordTableOptions {
  path: string;
  /** What the store calls this environment in errors and metrics (`answers`, `claims`). */
  name: string;
  /**
   * Commits are not flushed to disk. Only for an environment in memory (tmpfs), where there is
   * no disk to flush to and a crash of the machine empties it instead of corrupting it.
   */
  noSync: boolean;
  /**
   * A commit resolves only once it is on disk (no `overlappingSync`), so a caller that awaited
   * one needs no `flushed` of its own: lmdb-js' `flushed` is that of the latest batch, which
   * never resolves when that batch failed (a full disk), whoever's it is.
   */
  durable?: boolean;
}

/** The part of msgpackr's Packr the table uses: encoding, and its shared record shapes. */
interface SharedStructuresEncoder {
  encode(value: unknown): unknown;
  structures?: { uninitialized?: boolean };
}

/** The key of the one record `health` holds, which readiness rewrites to see a write succeed. */
const PROBE_KEY = 'probe';

/**
 * One LMDB environment of the store: `records` maps the scoped key to its record; `expiry` is an
 * ordered index `[expiresAt, scopedKey]` so the sweeper reads only what has expired. Several
 * processes on one host may open the same path: LMDB serializes their write transactions.
 */
export class RecordTable {
  readonly root: RootDatabase;
  readonly records: Database<IdempotencyRecord, string>;
  readonly name: string;
  private readonly path: string;
  private readonly expiry: Database<true, ExpiryKey>;
  private readonly health: Database<number, string>;
  /** Whether the last commit failed; cleared by the next one that succeeds. */
  private failing = false;

  constructor(options: RecordTableOptions) {
    this.name = options.name;
    this.path = options.path;
    // `txnStartThreshold` is documented in lmdb-js' README but missing from its types.
    const lmdbOptions: RootDatabaseOptionsWithPath & { txnStartThreshold: number } = {
      path: options.path,
      maxDbs: 4,
      noSync: options.noSync,
      ...(options.durable && { overlappingSync: false }),
      // With event-turn batching lmdb-js opens each batch with a commit promise nobody awaits,
      // which rejects, unhandled, when the commit fails. Without it, a batch still gathers the
      // writes of one event turn: it starts at the next setImmediate, never at a count.
      eventTurnBatching: false,
      txnStartThreshold: Number.MAX_SAFE_INTEGER,
    };
    this.root = open(lmdbOptions);
    // Records share msgpack structures, so each encodes without repeating its keys. lmdb-js's own
    // object cache stays off: it would serve this process's copy of a record that another process
    // has since changed (an IN_FLIGHT claim it completed), even inside write transactions.
    this.records = this.root.openDB<IdempotencyRecord, string>({
      name: 'records',
      sharedStructuresKey: Symbol.for('galang.idempotency.structures'),
    });
    this.expiry = this.root.openDB<true, ExpiryKey>({ name: 'expiry' });
    this.health = this.root.openDB<number, string>({ name: 'health' });
  }

  /** Whether the last commit of this environment failed (and none has succeeded since). */
  get writeFailing(): boolean {
    return this.failing;
  }

  /** The record as stored, expired or not. */
  get(key: string): IdempotencyRecord | undefined {
    return this.records.get(key);
  }

  /** A record and its expiry entry, in one conditional write: only if the key is absent. */
  insertIfAbsent(key: string, record: IdempotencyRecord): Promise<boolean> {
    return this.committed(() => {
      // msgpackr saves a record shape it has not seen synchronously, inside the first put that
      // needs it. Encoding first makes a failure of that save throw here, before the conditional
      // write is queued: thrown inside it, lmdb-js would leave that write's promise unobserved.
      this.encoder().encode(record);
      return this.records.ifNoExists(key, () => {
        void this.records.put(key, record);
        void this.expiry.put([record.expiresAt, key], true);
      });
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

  /**
   * One write transaction; the callback runs inside it, reads and writes atomically. A commit
   * that fails rejects with a {@link StoreWriteError}.
   */
  transaction<T>(work: () => T): Promise<T> {
    return this.committed(() => this.records.transaction(work));
  }

  /** Rewrites the probe record: whether this environment can commit now. */
  async probeWrite(): Promise<boolean> {
    try {
      await this.committed(() => this.health.put(PROBE_KEY, Date.now()));
      return true;
    } catch (error) {
      if (error instanceof StoreWriteError) return false;
      throw error;
    }
  }

  /**
   * A write's outcome, its failure named and remembered until a write succeeds again. lmdb-js
   * may also fail while queueing a write (msgpackr saves a new record shape synchronously).
   */
  private async committed<T>(write: () => Promise<T>): Promise<T> {
    // Refused before lmdb-js sees it: a write that meets a full disk inside lmdb-js may corrupt
    // the process's heap or leave lmdb-js's writer lock held (src/idempotency/disk-room.ts).
    if (!hasRoom(this.path)) {
      this.failing = true;
      throw new StoreWriteError(this.name, new NoRoomError(this.path));
    }
    try {
      const result = await write();
      this.failing = false;
      return result;
    } catch (error) {
      const failure = await commitFailure(error);
      if (failure === undefined) throw error;
      this.failing = true;
      this.reloadSharedStructures();
      throw new StoreWriteError(this.name, failure);
    }
  }

  /**
   * After a failed write, msgpackr may hold a record shape in memory that it believes saved
   * although its save was part of what failed; a record naming it would not decode in another
   * process. Marked uninitialized (as msgpackr does itself when a save is declined), the shapes
   * are read again from LMDB before the next encode, and a missing one is saved anew.
   */
  private reloadSharedStructures(): void {
    const { structures } = this.encoder();
    if (structures) structures.uninitialized = true;
  }

  /** The records' msgpackr encoder (lmdb-js types it `any`). */
  private encoder(): SharedStructuresEncoder {
    return (this.records as unknown as { encoder: SharedStructuresEncoder }).encoder;
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
