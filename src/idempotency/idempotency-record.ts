/** The records of the edge's idempotency store and what its operations answer. */
import type { ClaimHolder } from './claim-holder';

/** A response as it is replayed: status, the headers worth keeping, the exact body bytes. */
export interface StoredResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

interface RecordBase {
  /** SHA-256 of the canonical request body. */
  fingerprint: string;
  /** SHA-256 of the body bytes as first received; a byte-identical retry matches on it alone. */
  rawDigest: string;
  /**
   * Which process and which claim wrote it; complete/release must present the claim id. Host
   * and start time let a retry on the same host see that the holder died (records written
   * before they existed have neither).
   */
  owner: Partial<ClaimHolder> & { pid: number; claimId: string };
  createdAt: number;
  expiresAt: number;
}

export interface InFlightRecord extends RecordBase {
  status: 'IN_FLIGHT';
  /** After this instant the claimant is presumed dead and a retry may take over. */
  leaseUntil: number;
}

export interface CompletedRecord extends RecordBase {
  status: 'COMPLETED';
  response: StoredResponse;
}

export type IdempotencyRecord = InFlightRecord | CompletedRecord;

export type ClaimResult =
  | { outcome: 'claimed'; claimId: string }
  | { outcome: 'exists'; record: IdempotencyRecord }
  | { outcome: 'lost' };

export interface SweepResult {
  /** Expired records removed. */
  removed: number;
  /** Expired in-flight records kept because their workflow may still be running. */
  deferred: number;
  /** Whether the batch was full, so more expired entries may remain. */
  more: boolean;
}

export interface StoreStats {
  records: number;
  /** Entries of the expiry index; more than `records` while the sweeper is behind. */
  indexEntries: number;
  /** Bytes of the data files in use: LMDB's last written page times the page size. */
  usedBytes: number;
  /** The environments' current map sizes, the data files' ceilings before a remap. */
  mapBytes: number;
  /** Of `records`, the claims (IN_FLIGHT, kept in memory). */
  claims: number;
  /** Of `usedBytes`, the claims' environment. */
  claimsUsedBytes: number;
}
