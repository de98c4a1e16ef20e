import { currentHolder } from './claim-holder';
import type { ClaimHolder } from './claim-holder';
import { Claimant } from './claimant';
import type {
  ClaimResult,
  CompletedRecord,
  IdempotencyRecord,
  InFlightRecord,
  StoreStats,
  StoredResponse,
  SweepResult,
} from './idempotency-record';
import { KeptAnswers } from './kept-answers';
import type { RecordTable } from './record-table';
import { StoreEnvironments } from './store-environments';
import { StoreWriteError } from './store-write-error';

export interface IdempotencyStoreOptions {
  /** The answers' environment, on disk. */
  path: string;
  /** The claims' environment; by default in shared memory (`defaultClaimsPath`). */
  claimsPath?: string;
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
  /** Who this store's claims name as their holder; this process unless a test says otherwise. */
  holder?: ClaimHolder;
}

/**
 * The edge's idempotency records, in two LMDB environments that every process of the host opens:
 *
 * - **claims** (IN_FLIGHT): in shared memory, commits not flushed. A claim is a lock, not a
 *   fact: it must be atomic and seen by every process at once, and it survives the crash of the
 *   process that holds it (the memory belongs to the machine), which is what crash recovery
 *   needs. A crash of the machine empties it; every holder died with it, and a retry that finds
 *   no claim re-attaches through the workflow ID. Not flushing is what makes a claim cheap.
 * - **answers** (COMPLETED): on disk, every commit flushed before the client is answered, so
 *   not even a power cut makes the edge forget an answer it gave.
 *
 * A key moves from claims to answers when it completes: the answer is written (and flushed)
 * before the claim is removed, and a new claim checks the answers after it is written, so of a
 * completion and a new claim one always sees the other. See docs/idempotency.md.
 *
 * A write that fails (a full disk) throws a {@link StoreWriteError} and writes nothing. A claim
 * whose answer could not be stored is released; one that cannot even be released is abandoned:
 * this store lets a retry take it over at once and releases it when it next can.
 */
export class IdempotencyStore {
  /** Whether claims live in memory (unflushed) rather than beside the answers on disk. */
  readonly claimsInMemory: boolean;
  private readonly environments: StoreEnvironments;
  private readonly answers: RecordTable;
  private readonly claims: RecordTable;
  private readonly graceMs: number;
  private readonly now: () => number;
  private readonly kept: KeptAnswers;
  private readonly claimant: Claimant;

  constructor(options: IdempotencyStoreOptions) {
    this.environments = new StoreEnvironments(options.path, options.claimsPath);
    this.answers = this.environments.answers;
    this.claims = this.environments.claims;
    this.claimsInMemory = this.environments.claimsInMemory;
    this.graceMs = (options.inFlightGraceSeconds ?? 86_400) * 1000;
    this.now = options.now ?? Date.now;
    this.kept = new KeptAnswers(options.completedCacheSize ?? 10_000);
    this.claimant = new Claimant(
      options.holder ?? currentHolder(),
      options.ttlSeconds * 1000,
      (options.leaseSeconds ?? 30) * 1000,
    );
  }

  /** Whether a retry may take this claim over now ({@link Claimant.mayTakeOver}). */
  mayTakeOver(record: InFlightRecord): boolean {
    return this.claimant.mayTakeOver(record, this.now());
  }

  /**
   * The live record for a key, its answer before its claim; an expired one reads as absent
   * whether or not it was swept.
   *
   * A COMPLETED record never changes until it expires (answers are written once, only where
   * none is live), whichever process writes: so this process keeps the ones it read and answers
   * replays of them without reading LMDB.
   */
  get(key: string): IdempotencyRecord | undefined {
    const now = this.now();
    return this.answerOf(key, now) ?? this.liveClaim(key, now);
  }

  /**
   * Inserts an IN_FLIGHT record and its expiry entry in one conditional write, only if the key
   * is absent. An expired leftover is replaced inside one write transaction that re-reads it.
   * Then the answers are read: an answer stored since the caller looked wins, and the claim
   * is withdrawn.
   */
  async claim(key: string, fingerprint: string, rawDigest = ''): Promise<ClaimResult> {
    const now = this.now();
    const record = this.claimant.newClaim(fingerprint, rawDigest, now);
    const inserted = await this.claims.insertIfAbsent(key, record);
    const result = inserted
      ? ({ outcome: 'claimed', claimId: record.owner.claimId } as const)
      : await this.claims.transaction((): ClaimResult => {
          const existing = this.claims.get(key);
          if (existing && existing.expiresAt > now) return { outcome: 'exists', record: existing };
          this.claims.put(key, record, existing);
          return { outcome: 'claimed', claimId: record.owner.claimId };
        });
    return this.unlessAnswered(key, result);
  }

  /**
   * Takes over a claim whose lease has passed or whose holder is gone ({@link mayTakeOver}),
   * only if the record still is that claim: of several retries racing for a dead claimant's key,
   * exactly one wins. The winner must
   * re-attach to the work by its deterministic identity (the workflow ID), never assume that
   * nothing was started.
   */
  async takeOver(key: string, staleClaimId: string): Promise<ClaimResult> {
    const now = this.now();
    const result = await this.claims.transaction((): ClaimResult => {
      const existing = this.claims.get(key);
      if (
        existing?.status !== 'IN_FLIGHT' ||
        existing.owner.claimId !== staleClaimId ||
        !this.mayTakeOver(existing)
      ) {
        return existing ? { outcome: 'exists', record: existing } : { outcome: 'lost' };
      }
      const claim = this.claimant.takenOver(existing, now);
      this.claims.put(key, claim);
      return { outcome: 'claimed', claimId: claim.owner.claimId };
    });
    if (result.outcome === 'claimed') this.claimant.settled(staleClaimId);
    return this.unlessAnswered(key, result);
  }

  /**
   * Stores the final response if our claim still holds and no answer is live (its commit
   * resolves once it is on disk), then removes the claim. The claim is read, not locked (it
   * lives in the other environment): what keeps a late finisher from overwriting is that an
   * answer is written once. When the answer cannot be written, the claim is released anyway
   * ({@link releaseOrAbandon}) and the {@link StoreWriteError} thrown: the caller answers 503
   * and the client's retry runs again, re-attaching to its work by its deterministic identity.
   */
  async complete(key: string, claimId: string, response: StoredResponse): Promise<boolean> {
    const claim = this.claims.get(key);
    if (claim?.status !== 'IN_FLIGHT' || claim.owner.claimId !== claimId) return false;
    const now = this.now();
    const completed: CompletedRecord = {
      status: 'COMPLETED',
      fingerprint: claim.fingerprint,
      rawDigest: claim.rawDigest,
      owner: claim.owner,
      createdAt: claim.createdAt,
      expiresAt: claim.expiresAt,
      response,
    };
    // First answer wins: of a finisher that lost its claim to a take-over and the claimant that
    // replaced it, whichever stores first is the answer; the other's `complete` returns false.
    let stored: boolean;
    try {
      stored = await this.answers.transaction(() => {
        const existing = this.answers.get(key);
        if (existing && existing.status === 'COMPLETED' && existing.expiresAt > now) return false;
        this.answers.put(key, completed, existing);
        return true;
      });
    } catch (error) {
      await this.releaseOrAbandon(key, claimId);
      throw error;
    }
    // The answer is live and read before any claim: a claim left behind only waits to be swept.
    await this.releaseOrAbandon(key, claimId);
    return stored;
  }

  /** Drops our IN_FLIGHT claim so a retry can proceed; a newer claim is left untouched. */
  release(key: string, claimId: string): Promise<boolean> {
    return this.claims.transaction(() => {
      const existing = this.claims.get(key);
      if (existing?.status !== 'IN_FLIGHT' || existing.owner.claimId !== claimId) return false;
      this.claims.remove(key, existing);
      return true;
    });
  }

  /**
   * {@link release}, which never fails: a claim that cannot be removed now (its disk is full)
   * is abandoned instead. A retry of its key may take it over at once ({@link mayTakeOver}) and
   * the sweeper releases it once the claims can be written again. False when not released now.
   */
  async releaseOrAbandon(key: string, claimId: string): Promise<boolean> {
    try {
      return await this.release(key, claimId);
    } catch (error) {
      if (!(error instanceof StoreWriteError)) throw error;
      this.claimant.abandon(claimId, key);
      return false;
    }
  }

  /** Whether both environments can write ({@link StoreEnvironments.writable}). */
  get writable(): boolean {
    return this.environments.writable;
  }

  probeWrites(): Promise<boolean> {
    return this.environments.probeWrites();
  }

  /** Request bytes seen to match the answer this process keeps for `key`, if any. */
  knownBytes(key: string): string | undefined {
    return this.kept.knownBytes(key);
  }

  /** Remembers small request bytes that matched the kept answer of `key` ({@link KeptAnswers}). */
  rememberBytes(key: string, bytes: string): void {
    this.kept.rememberBytes(key, bytes);
  }

  /**
   * Releases the claims abandoned while their disk was full, then sweeps one batch of what
   * expired ({@link StoreEnvironments.sweep}).
   */
  async sweep(batchSize = 1_000): Promise<SweepResult> {
    await this.releaseAbandoned();
    return this.environments.sweep(this.now(), batchSize, this.graceMs);
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

  stats(): StoreStats {
    return this.environments.stats();
  }

  /** Releases the claims abandoned while their disk was full; those it still cannot stay. */
  private async releaseAbandoned(): Promise<void> {
    for (const [claimId, key] of this.claimant.abandonedClaims()) {
      try {
        await this.release(key, claimId);
        this.claimant.settled(claimId);
      } catch (error) {
        if (!(error instanceof StoreWriteError)) throw error;
        return;
      }
    }
  }

  close(): Promise<void> {
    return this.environments.close();
  }

  /**
   * A claim only stands if no answer is live: one may have been stored between the caller's
   * read and the claim (its claim removed just before ours), or before the machine restarted
   * and emptied the claims. Read from a fresh snapshot, after the claim was written.
   */
  private async unlessAnswered(key: string, result: ClaimResult): Promise<ClaimResult> {
    this.answers.refresh();
    const answer = this.answerOf(key, this.now());
    if (!answer) return result;
    if (result.outcome === 'claimed') await this.releaseOrAbandon(key, result.claimId);
    return { outcome: 'exists', record: answer };
  }

  /** The live answer: this process's copy if it keeps one, else LMDB's. */
  private answerOf(key: string, now: number): CompletedRecord | undefined {
    const kept = this.kept.live(key, now);
    if (kept) return kept;
    const record = this.answers.get(key);
    // Claims live in the other environment: anything but a live answer here is not an answer.
    if (record?.status !== 'COMPLETED' || record.expiresAt <= now) return undefined;
    this.kept.keep(key, record);
    return record;
  }

  private liveClaim(key: string, now: number): IdempotencyRecord | undefined {
    const record = this.claims.get(key);
    return record && record.expiresAt > now ? record : undefined;
  }
}
