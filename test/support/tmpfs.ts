import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** A small tmpfs of a test's own, which it can fill to the last page and free again. */
export interface SmallDisk {
  dir: string;
  /** Writes a file until the disk refuses (ENOSPC): nothing else fits afterwards. */
  fill(): void;
  /** Removes that file. */
  free(): void;
  unmount(): void;
}

const PAGE = Buffer.alloc(4096, 1);

/**
 * Mounts a tmpfs of `sizeBytes` on a new temp folder (`mount -t tmpfs`, so the test runs as
 * root, as CI does). A real file system that fills up, rather than a write failure made up at
 * a boundary: LMDB meets ENOSPC exactly where it would on a full disk or a full /dev/shm.
 */
export function mountSmallDisk(label: string, sizeBytes: number): SmallDisk {
  const dir = mkdtempSync(path.join(os.tmpdir(), `galang-${label}-`));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes}`, 'tmpfs', dir], {
      stdio: 'pipe',
    });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`This test mounts a tmpfs and must run as root: ${String(error)}`);
  }
  const filler = path.join(dir, 'filler');
  return {
    dir,
    fill() {
      const fd = openSync(filler, 'a');
      try {
        for (;;) writeSync(fd, PAGE);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
      } finally {
        closeSync(fd);
      }
    },
    free() {
      rmSync(filler, { force: true });
    },
    unmount() {
      execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
