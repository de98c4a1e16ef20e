import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { IdempotencyStore } from '../../src/idempotency/idempotency-store';
import { StoreWriteError } from '../../src/idempotency/store-write-error';

/**
 * Child process for the full-disk test: a store on the (small) disk at `dir`, which it fills to
 * the last byte, writes on, frees and writes on again. Prints one JSON line of counts. A child
 * because what lmdb-js does on a full disk (prints, corrupts its heap) must not hit Jest's.
 */
async function main(): Promise<void> {
  const [dir = ''] = process.argv.slice(2);
  const store = new IdempotencyStore({
    path: path.join(dir, 'answers'),
    claimsPath: path.join(dir, 'claims'),
    ttlSeconds: 86_400,
  });
  let next = 0;
  const write = async (): Promise<boolean> => {
    const key = `k-${next++}`;
    try {
      const claim = await store.claim(key, 'fp');
      if (claim.outcome !== 'claimed') throw new Error(`${key} not claimed`);
      await store.complete(key, claim.claimId, {
        statusCode: 202,
        headers: {},
        body: 'x'.repeat(2000),
      });
      return true;
    } catch (error) {
      if (error instanceof StoreWriteError) return false;
      throw error;
    }
  };
  const count = async (writes: number) => {
    let ok = 0;
    for (let i = 0; i < writes; i++) if (await write()) ok++;
    return ok;
  };
  const warm = await count(10);
  const filler = path.join(dir, 'filler');
  const fd = openSync(filler, 'w');
  try {
    for (;;) writeSync(fd, Buffer.alloc(4096, 1));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  const onFullDisk = await count(60);
  const readyOnFullDisk = await store.probeWrites();
  rmSync(filler);
  const readyAfter = await store.probeWrites();
  const after = await count(10);
  await store.close();
  process.stdout.write(
    `${JSON.stringify({ warm, onFullDisk, readyOnFullDisk, readyAfter, after })}\n`,
  );
}

void main();
