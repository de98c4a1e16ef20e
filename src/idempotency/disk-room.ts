import { statfsSync } from 'node:fs';

/** The most a store keeps free on its file system; less on a small one (a tenth of it). */
const RESERVE_BYTES = 1024 * 1024;

/**
 * Whether the file system holding `dir` has room for the store to write: more than a reserve
 * free. lmdb-js 3.5 must never meet ENOSPC itself: its write-error paths overrun heap buffers
 * (`last_error`, shared by its threads) and may return holding its writer lock, after which the
 * process aborts, crashes or blocks for good in a futex. So the store refuses first.
 */
export function hasRoom(dir: string): boolean {
  try {
    const { bavail, blocks, bsize } = statfsSync(dir);
    const reserve = Math.min(RESERVE_BYTES, (blocks * bsize) / 10);
    return bavail * bsize > reserve;
  } catch {
    // A file system that cannot be asked is left to LMDB to judge.
    return true;
  }
}

/** The reason of a write the store refused itself on a full disk. */
export class NoRoomError extends Error {
  override readonly name = 'NoRoomError';
  readonly code = 'ENOSPC';

  constructor(dir: string) {
    super(`No room left for the idempotency store in ${dir}`);
  }
}
