import { randomUUID } from 'node:crypto';
import { open } from 'lmdb';
import type { Database, RootDatabase } from 'lmdb';

/** A response as it is replayed: status, the headers worth keeping, the exact body bytes. */
export interface StoredResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

interface RecordBase {
  fingerprint: string;
  /** Which process and which claim wrote it; complete/release must present the claim id. */
  owner: { pid: number; claimId: string };
  createdAt: number;
  expiresAt: number;
}

export interface InFlightRecord extends RecordBase {
  status: 'IN_FLIGHT';
  /** After this instant the claimant is presumed dead; see crash recovery in docs/idempotency.md. */
  leaseUntil: number;
}

export interface CompletedRecord extends RecordBase {
  status: 'COMPLETED';
  response: StoredResponse;
}

export type IdempotencyRecord = InFlightRecord | CompletedRecord;

export type ClaimResult =
  { outcome: 'claimed'; claimId: string } | { outcome: 'exists'; record: IdempotencyRecord };

export interface IdempotencyStoreOptions {
  path: string;
  ttlSeconds: number;
  leaseSeconds?: number;
  /** Injected for tests; milliseconds since the epoch. */
  now?: () => number;
}

type ExpiryKey = [number, string];

/**
 * The edge's idempotency records in an embedded LMDB environment. Several processes on one host
 * may open the same path: LMDB serializes their write transactions, so a claim is atomic across
 * processes.
 *
 * Layout: `records` maps the scoped key to its record; `expiry` is an ordered index
 * `[expiresAt, scopedKey]` so the sweeper reads only what has expired.
 */
export class IdempotencyStore {
  private readonly root: RootDatabase;
  private readonly records: Database<IdempotencyRecord, string>;
  private readonly expiry: Database<null, ExpiryKey>;
  private readonly ttlMs: number;
  private readonly leaseMs: number;
  private readonly now: () => number;

  constructor(options: IdempotencyStoreOptions) {
    this.root = open({ path: options.path, maxDbs: 4 });
    this.records = this.root.openDB<IdempotencyRecord, string>({ name: 'records' });
    this.expiry = this.root.openDB<null, ExpiryKey>({ name: 'expiry' });
    this.ttlMs = options.ttlSeconds * 1000;
    this.leaseMs = (options.leaseSeconds ?? 30) * 1000;
    this.now = options.now ?? Date.now;
  }

  /** The live record for a key; an expired one reads as absent whether or not it was swept. */
  get(key: string): IdempotencyRecord | undefined {
    const record = this.records.get(key);
    return record && record.expiresAt > this.now() ? record : undefined;
  }

  /**
   * Inserts an IN_FLIGHT record and its expiry entry in one write, only if the key is absent.
   * An expired leftover is replaced inside one write transaction that re-reads it first.
   * Resolves once committed, i.e. visible to every process on the host.
   */
  async claim(key: string, fingerprint: string): Promise<ClaimResult> {
    const now = this.now();
    const claimId = randomUUID();
    const record: InFlightRecord = {
      status: 'IN_FLIGHT',
      fingerprint,
      owner: { pid: process.pid, claimId },
      createdAt: now,
      expiresAt: now + this.ttlMs,
      leaseUntil: now + this.leaseMs,
    };
    const inserted = await this.records.ifNoExists(key, () => {
      void this.records.put(key, record);
      void this.expiry.put([record.expiresAt, key], null);
    });
    if (inserted) return { outcome: 'claimed', claimId };

    return this.records.transaction((): ClaimResult => {
      const existing = this.records.get(key);
      if (existing && existing.expiresAt > now) return { outcome: 'exists', record: existing };
      if (existing) void this.expiry.remove([existing.expiresAt, key]);
      void this.records.put(key, record);
      void this.expiry.put([record.expiresAt, key], null);
      return { outcome: 'claimed', claimId };
    });
  }

  /**
   * Stores the final response, only if our claim still holds. Waits for the flush to disk: a
   * completed response must survive not only a process kill but a power cut, since the client
   * has been told the outcome.
   */
  async complete(key: string, claimId: string, response: StoredResponse): Promise<boolean> {
    const done = await this.records.transaction(() => {
      const existing = this.records.get(key);
      if (existing?.status !== 'IN_FLIGHT' || existing.owner.claimId !== claimId) return false;
      const completed: CompletedRecord = {
        status: 'COMPLETED',
        fingerprint: existing.fingerprint,
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

  async close(): Promise<void> {
    await this.root.close();
  }
}
