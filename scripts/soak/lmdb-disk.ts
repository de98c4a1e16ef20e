import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { run } from '../stack/commands';

/**
 * The LMDB folder on a size-limited tmpfs of its own, so a soak can fill the disk under the
 * API's idempotency store without touching the machine's (mounting needs root).
 */
export class LmdbDisk {
  private mounted = false;

  constructor(
    readonly dir: string,
    private readonly sizeMb: number,
  ) {}

  mount(): void {
    run('mount', ['-t', 'tmpfs', '-o', `size=${this.sizeMb}m,mode=0700`, 'tmpfs', this.dir]);
    this.mounted = true;
  }

  /** Writes a file until the disk says ENOSPC; returns the bytes it took. */
  fill(): number {
    const fd = openSync(this.filler(), 'w');
    const chunk = Buffer.alloc(1024 * 1024, 0x5a);
    let written = 0;
    try {
      for (;;) written += writeSync(fd, chunk);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    } finally {
      closeSync(fd);
    }
    return written;
  }

  /** Frees what {@link fill} took. */
  free(): void {
    rmSync(this.filler(), { force: true });
  }

  unmount(): void {
    if (!this.mounted) return;
    // Lazily: a process killed a moment ago may still hold the store open.
    run('umount', ['-l', this.dir]);
    this.mounted = false;
  }

  private filler(): string {
    return path.join(this.dir, 'soak-filler');
  }
}
