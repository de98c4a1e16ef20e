import { spawn } from 'node:child_process';
import path from 'node:path';
import { mountSmallDisk } from '../support/tmpfs';
import type { SmallDisk } from '../support/tmpfs';

/** Runs test/support/write-on-full-disk.ts on `dir`; its exit, stdout and stderr. */
function writeOnFullDisk(dir: string) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(__dirname, '../support/write-on-full-disk.ts'), dir],
    { cwd: path.resolve(__dirname, '../..'), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise<{
    code: number | null;
    signal: string | null;
    stdout: string;
    stderr: string;
  }>((resolve) => {
    child.once('exit', (code, signal) => {
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/**
 * lmdb-js 3.5 must never meet a full disk itself: its ENOSPC paths overrun heap buffers and can
 * leave its writer lock held, so API processes aborted or hung for good after the soak filled
 * their disk. The store refuses such writes before lmdb-js sees them, and writes again once the
 * disk has room.
 */
describe('the idempotency store on a full disk, in its own process', () => {
  let disk: SmallDisk;

  beforeEach(() => {
    disk = mountSmallDisk('full-store', 2 * 1024 * 1024);
  });
  afterEach(() => {
    disk.unmount();
  });

  it('refuses writes itself, so lmdb-js never meets ENOSPC, and writes again once there is room', async () => {
    const run = await writeOnFullDisk(disk.dir);
    expect({ code: run.code, signal: run.signal }).toEqual({ code: 0, signal: null });
    // What lmdb-js prints (C and JS) when one of its writes met the full disk.
    expect(run.stderr).not.toMatch(/No space left on device|Input\/output error|mdb_page_spill/);
    expect(JSON.parse(run.stdout)).toEqual({
      warm: 10,
      onFullDisk: 0,
      readyOnFullDisk: false,
      readyAfter: true,
      after: 10,
    });
  }, 60_000);
});
