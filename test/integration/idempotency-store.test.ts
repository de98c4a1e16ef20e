import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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
    rmSync(dir, { recursive: true, force: true });
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
