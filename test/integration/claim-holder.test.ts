import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { currentHolder, isHolderGone, processStartTime } from '../../src/idempotency/claim-holder';
import type { ClaimHolder } from '../../src/idempotency/claim-holder';
import { removeStoreFiles } from '../../src/idempotency/claims-location';
import type { InFlightRecord } from '../../src/idempotency/idempotency-record';
import { IdempotencyStore } from '../../src/idempotency/idempotency-store';

/**
 * Who holds a claim, and when a retry may stop waiting for it: at once when the holder is gone
 * from this host, only after the lease when it lives elsewhere. Real processes and real LMDB.
 */
describe('the holder of a claim', () => {
  let dir: string;
  let now: number;
  const stores: IdempotencyStore[] = [];

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'galang-holder-'));
    now = 1_000_000;
  });
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
    removeStoreFiles(dir);
  });

  /** A store whose claims name `holder`, with a lease of 30 s on the test's clock. */
  const storeHeldBy = (holder: ClaimHolder) => {
    const store = new IdempotencyStore({
      path: dir,
      ttlSeconds: 600,
      leaseSeconds: 30,
      now: () => now,
      holder,
    });
    stores.push(store);
    return store;
  };
  const claimOf = async (store: IdempotencyStore): Promise<InFlightRecord> => {
    expect((await store.claim('k', 'fp')).outcome).toBe('claimed');
    const record = store.get('k');
    if (record?.status !== 'IN_FLIGHT') throw new Error('no claim');
    return record;
  };

  it('records host, pid and start time', async () => {
    const holder = currentHolder();
    expect(holder).toEqual({
      host: os.hostname(),
      pid: process.pid,
      startTime: expect.any(Number) as number,
    });
    const record = await claimOf(storeHeldBy(holder));
    expect(record.owner).toMatchObject(holder);
  });

  it('takes over at once the claim of a process that died on this host', async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], {
      stdio: 'ignore',
    });
    const pid = child.pid ?? 0;
    await new Promise((resolve) => setTimeout(resolve, 100));
    const holder = { host: os.hostname(), pid, startTime: processStartTime(pid) };
    expect(holder.startTime).toEqual(expect.any(Number));
    const store = storeHeldBy(holder);
    const record = await claimOf(store);
    expect(store.mayTakeOver(record)).toBe(false);

    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    // The lease (30 s) has not moved: the holder's death alone lets the retry in.
    expect(store.mayTakeOver(record)).toBe(true);
    const racers = await Promise.all(
      [1, 2, 3].map(() => store.takeOver('k', record.owner.claimId)),
    );
    expect(racers.filter((r) => r.outcome === 'claimed')).toHaveLength(1);
  });

  it('tells a process that reused the pid from the holder', async () => {
    const me = currentHolder();
    const store = storeHeldBy({ ...me, startTime: (me.startTime ?? 0) - 1 });
    const record = await claimOf(store);
    expect(store.mayTakeOver(record)).toBe(true);
    expect(isHolderGone(me, me.host)).toBe(false);
  });

  it('waits out the lease of a holder on another host, or of one recorded without a host', async () => {
    const dead = 2 ** 22 + 1; // above the default pid_max: no process has it here
    const here = storeHeldBy(currentHolder());
    for (const [i, holder] of [{ host: 'another-host', pid: dead }, { pid: dead }].entries()) {
      // Another host's process writes into the same environment (a shared claims path).
      const elsewhere = storeHeldBy(holder as ClaimHolder);
      const key = `k-${i}`;
      expect((await elsewhere.claim(key, 'fp')).outcome).toBe('claimed');
      const record = here.get(key);
      if (record?.status !== 'IN_FLIGHT') throw new Error('no claim');
      expect(here.mayTakeOver(record)).toBe(false);
      expect((await here.takeOver(key, record.owner.claimId)).outcome).toBe('exists');
      now += 30_000;
      expect(here.mayTakeOver(record)).toBe(true);
      expect((await here.takeOver(key, record.owner.claimId)).outcome).toBe('claimed');
    }
  });
});
