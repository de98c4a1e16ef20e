import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, statSync, statfsSync } from 'node:fs';
import path from 'node:path';

/** `statfs` types of file systems that live in memory and are empty after every boot. */
const MEMORY_FILE_SYSTEMS = new Set([0x01021994 /* tmpfs */, 0x858458f6 /* ramfs */]);

const SHARED_MEMORY = '/dev/shm';

/**
 * Where the claims of the store at `answersPath` live unless configured: a folder in shared
 * memory named after the answers' path, so every process of the host that opens the same store
 * finds the same claims without being told. Where the host has no shared memory, a folder
 * beside the answers on disk (claims are then flushed like answers: correct, slower).
 */
export function defaultClaimsPath(answersPath: string): string {
  if (!isMemoryBacked(SHARED_MEMORY)) return path.join(answersPath, 'claims');
  const name = createHash('sha256').update(path.resolve(answersPath)).digest('hex').slice(0, 16);
  return path.join(SHARED_MEMORY, `galang-claims-${name}`);
}

/** Whether `dir` is on a file system that is kept in memory (and so emptied by a reboot). */
export function isMemoryBacked(dir: string): boolean {
  try {
    return MEMORY_FILE_SYSTEMS.has(statfsSync(dir).type);
  } catch {
    return false;
  }
}

/**
 * Creates the claims folder readable by this user only, and refuses one that another user made:
 * shared memory is writable by everyone, and whoever owns the folder could forge claims.
 */
export function prepareClaimsDir(dir: string): void {
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const owner = statSync(dir).uid;
  if (typeof process.getuid === 'function' && owner !== process.getuid()) {
    throw new Error(`The claims folder ${dir} belongs to another user (uid ${String(owner)}).`);
  }
}

/** Deletes a store's files, answers and claims: for tests and benchmarks that made one. */
export function removeStoreFiles(answersPath: string, claimsPath = defaultClaimsPath(answersPath)) {
  rmSync(claimsPath, { recursive: true, force: true });
  rmSync(answersPath, { recursive: true, force: true });
}
