import { spawn } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  defaultClaimsPath,
  isMemoryBacked,
  prepareClaimsDir,
  removeStoreFiles,
} from '../../src/idempotency/claims-location';
import { IdempotencyStore } from '../../src/idempotency/idempotency-store';

const response = { statusCode: 202, headers: { 'content-type': 'application/json' }, body: '{}' };

describe('LMDB idempotency store', () => {
  let dir: string;
  let now: number;
  let store: IdempotencyStore;

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'galang-store-'));
    now = 1_000_000;
    store = new IdempotencyStore({ path: dir, ttlSeconds: 60, now: () => now });
  });
  afterEach(async () => {
    await store.close();
    removeStoreFiles(dir);
  });

  it('claims a key once; the second claimant sees the in-flight record', async () => {
    const first = await store.claim('k', 'fp');
    expect(first.outcome).toBe('claimed');
    const second = await store.claim('k', 'fp');
    expect(second).toMatchObject({ outcome: 'exists', record: { status: 'IN_FLIGHT' } });
  });

  it('lets exactly one of many concurrent claims win', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, () => store.claim('k', 'fp')));
    expect(results.filter((r) => r.outcome === 'claimed')).toHaveLength(1);
  });

  it('completes only with the current claim id', async () => {
    const claim = await store.claim('k', 'fp');
    if (claim.outcome !== 'claimed') throw new Error('not claimed');
    expect(await store.complete('k', 'stale-claim', response)).toBe(false);
    expect(store.get('k')?.status).toBe('IN_FLIGHT');
    expect(await store.complete('k', claim.claimId, response)).toBe(true);
    expect(store.get('k')).toMatchObject({ status: 'COMPLETED', response });
    expect(await store.complete('k', claim.claimId, response)).toBe(false);
  });

  it('releases only its own in-flight claim', async () => {
    const claim = await store.claim('k', 'fp');
    if (claim.outcome !== 'claimed') throw new Error('not claimed');
    expect(await store.release('k', 'someone-else')).toBe(false);
    expect(await store.release('k', claim.claimId)).toBe(true);
    expect(store.get('k')).toBeUndefined();
    expect((await store.claim('k', 'fp')).outcome).toBe('claimed');
  });

  it('does not release a completed record', async () => {
    const claim = await store.claim('k', 'fp');
    if (claim.outcome !== 'claimed') throw new Error('not claimed');
    await store.complete('k', claim.claimId, response);
    expect(await store.release('k', claim.claimId)).toBe(false);
    expect(store.get('k')?.status).toBe('COMPLETED');
  });

  it('reads an expired record as absent and lets a new claim replace it', async () => {
    const claim = await store.claim('k', 'fp');
    if (claim.outcome !== 'claimed') throw new Error('not claimed');
    await store.complete('k', claim.claimId, response);
    now += 61_000;
    expect(store.get('k')).toBeUndefined();
    const again = await store.claim('k', 'other');
    expect(again.outcome).toBe('claimed');
    expect(store.get('k')).toMatchObject({ status: 'IN_FLIGHT', fingerprint: 'other' });
  });
});

describe('LMDB idempotency sweeper', () => {
  let dir: string;
  let now: number;
  let store: IdempotencyStore;

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'galang-sweep-'));
    now = 10_000_000;
    store = new IdempotencyStore({
      path: dir,
      ttlSeconds: 60,
      leaseSeconds: 5,
      inFlightGraceSeconds: 600,
      now: () => now,
    });
  });
  afterEach(async () => {
    await store.close();
    removeStoreFiles(dir);
  });

  async function completed(key: string) {
    const claim = await store.claim(key, 'fp');
    if (claim.outcome !== 'claimed') throw new Error('not claimed');
    await store.complete(key, claim.claimId, response);
  }

  it('removes expired completed records and their index entries, keeps live ones', async () => {
    for (let i = 0; i < 25; i++) await completed(`old-${i}`);
    now += 30_000;
    await completed('young');
    now += 31_000; // the old ones are 61 s old, 'young' 31 s
    const result = await store.sweepAll(10);
    expect(result).toMatchObject({ removed: 25, deferred: 0 });
    expect(store.stats()).toMatchObject({ records: 1, indexEntries: 1 });
    expect(store.get('young')?.status).toBe('COMPLETED');
  });

  it('sweeps in bounded batches and reports when more remain', async () => {
    for (let i = 0; i < 7; i++) await completed(`k-${i}`);
    now += 61_000;
    expect(await store.sweep(5)).toMatchObject({ removed: 5, more: true });
    expect(await store.sweep(5)).toMatchObject({ removed: 2, more: false });
  });

  it('keeps an expired in-flight record while its workflow may still run, then removes it', async () => {
    await store.claim('abandoned', 'fp');
    now += 61_000;
    expect(store.get('abandoned')).toBeUndefined();
    expect(await store.sweepAll()).toMatchObject({ removed: 0, deferred: 1 });
    expect(store.stats().records).toBe(1);
    now += 600_000;
    expect(await store.sweepAll()).toMatchObject({ removed: 1, deferred: 0 });
    expect(store.stats()).toMatchObject({ records: 0, indexEntries: 0 });
  });

  it('lets only one of several retries take over a dead claim, and only after its lease', async () => {
    const claim = await store.claim('k', 'fp');
    if (claim.outcome !== 'claimed') throw new Error('not claimed');
    expect((await store.takeOver('k', claim.claimId)).outcome).toBe('exists');
    now += 6_000;
    const racers = await Promise.all([1, 2, 3].map(() => store.takeOver('k', claim.claimId)));
    expect(racers.filter((r) => r.outcome === 'claimed')).toHaveLength(1);
    expect(await store.complete('k', claim.claimId, response)).toBe(false);
  });
});

describe('LMDB claims in memory, answers on disk', () => {
  it('keeps answers and forgets claims when the machine restarts (the claims are emptied)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'galang-restart-'));
    const claimsPath = defaultClaimsPath(dir);
    const open = () => new IdempotencyStore({ path: dir, ttlSeconds: 86_400 });
    let store = open();
    try {
      expect(store.claimsInMemory).toBe(isMemoryBacked('/dev/shm'));
      const done = await store.claim('answered', 'fp');
      if (done.outcome !== 'claimed') throw new Error('not claimed');
      await store.complete('answered', done.claimId, response);
      await store.claim('in-flight', 'fp');
      expect(store.stats()).toMatchObject({ records: 2, claims: 1 });
      await store.close();
      rmSync(claimsPath, { recursive: true, force: true });

      store = open();
      expect(store.get('answered')).toMatchObject({ status: 'COMPLETED', response });
      expect(store.get('in-flight')).toBeUndefined();
      // A new claim of an answered key finds the answer and withdraws itself.
      expect(await store.claim('answered', 'fp')).toMatchObject({
        outcome: 'exists',
        record: { status: 'COMPLETED' },
      });
      expect(await store.claim('in-flight', 'fp')).toMatchObject({ outcome: 'claimed' });
      expect(store.stats()).toMatchObject({ records: 2, claims: 1 });
    } finally {
      await store.close();
      removeStoreFiles(dir);
    }
  });

  it('lets an answer stored after a caller looked win over its claim', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'galang-race-'));
    const store = new IdempotencyStore({ path: dir, ttlSeconds: 86_400 });
    try {
      const first = await store.claim('k', 'fp');
      if (first.outcome !== 'claimed') throw new Error('not claimed');
      expect(store.get('k')?.status).toBe('IN_FLIGHT');
      // The first claimant completes: its answer is stored and its claim removed, so the
      // conditional insert of a second claim succeeds; the answer must still decide.
      await store.complete('k', first.claimId, response);
      expect(await store.claim('k', 'fp')).toMatchObject({
        outcome: 'exists',
        record: { status: 'COMPLETED' },
      });
      expect(store.stats().claims).toBe(0);
      // A late finisher of the withdrawn claim cannot store a second answer.
      expect(await store.complete('k', first.claimId, { ...response, body: '{"late":1}' })).toBe(
        false,
      );
      expect(store.get('k')).toMatchObject({ response });
    } finally {
      await store.close();
      removeStoreFiles(dir);
    }
  });

  it('flushes claims kept on disk where there is no memory-backed folder', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'galang-disk-claims-'));
    // The repository's own folder is on disk wherever the tests run.
    const claimsPath = mkdtempSync(path.join(__dirname, '../../.data-test-claims-'));
    const store = new IdempotencyStore({ path: dir, claimsPath, ttlSeconds: 86_400 });
    try {
      expect(store.claimsInMemory).toBe(false);
      expect((await store.claim('k', 'fp')).outcome).toBe('claimed');
      expect((await store.claim('k', 'fp')).outcome).toBe('exists');
    } finally {
      await store.close();
      removeStoreFiles(dir, claimsPath);
    }
  });

  it('names one claims folder per store, and refuses a folder another user made', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'galang-claims-path-'));
    try {
      expect(defaultClaimsPath(dir)).toBe(defaultClaimsPath(`${dir}/`));
      expect(defaultClaimsPath(dir)).not.toBe(defaultClaimsPath(`${dir}-other`));
      const foreign = path.join(dir, 'foreign');
      mkdirSync(foreign);
      // The tests run as root here, which may hand a folder to another user.
      chownSync(foreign, 65_534, 65_534);
      expect(() => {
        prepareClaimsDir(foreign);
      }).toThrow(/another user/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** Runs test/support/complete-and-hang.ts on `dir`; resolves each step it reports. */
function completeInChild(dir: string, key: string, ...args: string[]) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(__dirname, '../support/complete-and-hang.ts'), dir, key, ...args],
    { cwd: path.resolve(__dirname, '../..'), stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const reported = (step: string) =>
    new Promise<void>((resolve, reject) => {
      const onData = (chunk: Buffer) => {
        if (!chunk.toString().includes(step)) return;
        child.stdout.off('data', onData);
        child.off('exit', onExit);
        resolve();
      };
      const onExit = (code: number | null) => {
        reject(new Error(`child exited early with ${String(code)}`));
      };
      child.stdout.on('data', onData);
      child.once('exit', onExit);
    });
  return {
    reported,
    proceed: () => child.stdin.write('go\n'),
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

describe('LMDB durability', () => {
  it('keeps a completed response when the process is killed right after completing', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'galang-durable-'));
    const child = completeInChild(dir, 'k');
    await child.reported('completed');
    await child.kill();

    const reopened = new IdempotencyStore({ path: dir, ttlSeconds: 86_400 });
    try {
      expect(reopened.get('k')).toMatchObject({
        status: 'COMPLETED',
        response: { statusCode: 202, body: '{"ok":true}' },
      });
    } finally {
      await reopened.close();
      removeStoreFiles(dir);
    }
  });
});

describe('LMDB shared by several processes', () => {
  it("sees another process's completion of a record it read in flight", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'galang-shared-'));
    const child = completeInChild(dir, 'k', '--step');
    const store = new IdempotencyStore({ path: dir, ttlSeconds: 86_400, leaseSeconds: 0 });
    try {
      await child.reported('claimed');
      expect(store.get('k')?.status).toBe('IN_FLIGHT');

      const completed = child.reported('completed');
      child.proceed();
      await completed;
      expect(store.get('k')).toMatchObject({
        status: 'COMPLETED',
        response: { statusCode: 202, body: '{"ok":true}' },
      });
      // The claim this process saw is gone: taking it over must fail, not undo the completion.
      const inFlight = store.get('k');
      const staleClaimId = inFlight?.owner.claimId ?? '';
      expect(await store.takeOver('k', staleClaimId)).toMatchObject({ outcome: 'exists' });
      expect(store.get('k')?.status).toBe('COMPLETED');
    } finally {
      await child.kill();
      await store.close();
      removeStoreFiles(dir);
    }
  });
});
