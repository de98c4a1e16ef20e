import { randomBytes } from 'node:crypto';
import { isHolderGone } from './claim-holder';
import type { ClaimHolder } from './claim-holder';
import type { InFlightRecord } from './idempotency-record';

/**
 * An idempotency store as the maker of claims: the ids and records of its claims, the rule by
 * which a retry may take a claim over, and the claims it gave up on but could not remove.
 */
export class Claimant {
  /** Claim ids are a random prefix and a counter: unique, and no entropy per claim. */
  private readonly idPrefix = randomBytes(12).toString('base64url');
  private count = 0;
  /** Claims given up on but not removed (their disk was full): the key, by claim id. */
  private readonly abandoned = new Map<string, string>();

  constructor(
    private readonly holder: ClaimHolder,
    private readonly ttlMs: number,
    private readonly leaseMs: number,
  ) {}

  /** A new IN_FLIGHT record held by this claimant, its lease and expiry counted from `now`. */
  newClaim(fingerprint: string, rawDigest: string, now: number): InFlightRecord {
    return {
      status: 'IN_FLIGHT',
      fingerprint,
      rawDigest,
      owner: { ...this.holder, claimId: this.nextId() },
      createdAt: now,
      expiresAt: now + this.ttlMs,
      leaseUntil: now + this.leaseMs,
    };
  }

  /** `claim` taken over by this claimant: the same request, a new owner and lease. */
  takenOver(claim: InFlightRecord, now: number): InFlightRecord {
    return {
      ...claim,
      owner: { ...this.holder, claimId: this.nextId() },
      leaseUntil: now + this.leaseMs,
    };
  }

  /**
   * Whether a retry may take this claim over now: its lease has passed, or its holder ran on
   * this host and is gone (killed, crashed), or it is this claimant's and was abandoned, so
   * nothing will ever complete it. A holder on another host cannot be checked from here and
   * keeps its claim for the whole lease.
   */
  mayTakeOver(record: InFlightRecord, now: number): boolean {
    return (
      record.leaseUntil <= now ||
      this.abandoned.has(record.owner.claimId) ||
      isHolderGone(record.owner, this.holder.host)
    );
  }

  /** A claim that could not be released (its disk was full): a retry may take it over now. */
  abandon(claimId: string, key: string): void {
    this.abandoned.set(claimId, key);
  }

  /** The claim is gone (released or taken over): nothing is left to release. */
  settled(claimId: string): void {
    this.abandoned.delete(claimId);
  }

  /** The claims abandoned and not yet released, as [claim id, key]. */
  abandonedClaims(): [string, string][] {
    return [...this.abandoned];
  }

  private nextId(): string {
    this.count++;
    return `${this.idPrefix}.${this.count.toString(36)}`;
  }
}
