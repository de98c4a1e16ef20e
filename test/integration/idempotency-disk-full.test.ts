import path from 'node:path';
import { deriveUuid } from '../../src/idempotency/idempotency-key';
import { spawnApi } from '../support/api-process';
import type { ApiProcess } from '../support/api-process';
import { clientAScope, postDonation } from '../support/donations';
import { createCampaign, donationBody, eventually, startStack } from '../support/stack';
import type { Stack } from '../support/stack';
import { mountSmallDisk } from '../support/tmpfs';
import type { SmallDisk } from '../support/tmpfs';

/**
 * The edge's LMDB store on a disk that fills up, for real: the API process keeps its answers
 * and its claims on small tmpfs mounts of this test's own, which the test fills to the last
 * page. Whatever the disk does, a request ends with its answer stored or its claim released,
 * and a store that cannot write answers 503 with Retry-After; the retry with the same key
 * reaches the same donation once the disk has room again.
 */
describe('the idempotency store on a full disk', () => {
  let stack: Stack;
  let answers: SmallDisk;
  let claims: SmallDisk;
  let api: ApiProcess;
  let campaignId: string;

  beforeAll(async () => {
    stack = await startStack({ autoPayMs: -1 });
    answers = mountSmallDisk('answers', 2 * 1024 * 1024);
    claims = mountSmallDisk('claims', 2 * 1024 * 1024);
    api = await spawnApi(stack.config, {
      LMDB_PATH: path.join(answers.dir, 'idempotency'),
      LMDB_CLAIMS_PATH: path.join(claims.dir, 'claims'),
    });
    campaignId = await createCampaign(stack.db);
  }, 120_000);
  afterAll(async () => {
    await api.stop();
    answers.unmount();
    claims.unmount();
    await stack.stop();
  });

  const post = (key: string) => postDonation(api.url, key, donationBody(campaignId));
  let next = 0;
  /**
   * New keys until one is not accepted. LMDB first reuses the pages its earlier commits freed,
   * so the first writes on a full disk may still fit; a store that grows meets the full disk
   * within a few.
   */
  const firstRefused = async (label: string) => {
    for (let i = 0; i < 60; i++) {
      const key = `${label}-${campaignId}-${next++}`;
      const response = await post(key);
      if (response.status !== 202) return { key, response };
    }
    throw new Error('Every request was accepted on a full disk');
  };
  const expectStoreUnavailable = async (response: Response) => {
    expect(response.status).toBe(503);
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await response.json()).toMatchObject({ status: 503, code: 'service-unavailable' });
  };
  const rowsOf = async (key: string) =>
    stack.db
      .selectFrom('donations')
      .select(['id'])
      .where('client_id', '=', 'client-a')
      .where('idempotency_key', '=', key)
      .execute();

  it('answers 503 when the answer cannot be stored, releases the claim, and the retry reaches the same donation', async () => {
    expect((await post(`warm-${campaignId}`)).status).toBe(202);
    answers.fill();
    let key: string;
    try {
      const refused = await firstRefused('answers-full');
      key = refused.key;
      await expectStoreUnavailable(refused.response);
      // The workflow had started: the donation exists, though its answer could not be kept.
      const id = deriveUuid(clientAScope(key));
      await eventually(async () => ((await rowsOf(key)).length === 1 ? true : undefined));
      // The claim was released: the retry runs again (and meets the full disk again), no 409.
      await expectStoreUnavailable(await post(key));
      expect(stack.simulator.chargeCount(`${id}:create`)).toBe(1);
      // A node that cannot use its own store leaves the rotation.
      const unready = await fetch(`${api.url}/readyz`);
      expect(unready.status).toBe(503);
      expect(await unready.json()).toMatchObject({ status: 'unready', checks: { lmdb: 'down' } });
    } finally {
      answers.free();
    }
    // Back once a write succeeds again: readiness tries one itself.
    const ready = await fetch(`${api.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { lmdb: 'up' } });
    const accepted = await post(key);
    expect(accepted.status).toBe(202);
    const body = (await accepted.json()) as { id: string };
    expect(body.id).toBe(deriveUuid(clientAScope(key)));
    expect(await rowsOf(key)).toEqual([{ id: body.id }]);
    expect(stack.simulator.chargeCount(`${body.id}:create`)).toBe(1);
    // Stored this time: the next retry is a replay.
    const replay = await post(key);
    expect(replay.status).toBe(202);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(await replay.json()).toEqual(body);
  }, 120_000);

  it('answers 503 when the claims cannot be written (a full /dev/shm), and serves again once they can', async () => {
    // LMDB recycles the pages of claims that came and went: what needs room is many claims at
    // once, as in a rush. On a task queue no worker polls, each request holds its claim for the
    // whole early-return wait (2 s) before it answers PENDING.
    const rush = await spawnApi(stack.config, {
      LMDB_PATH: path.join(answers.dir, 'rush'),
      LMDB_CLAIMS_PATH: path.join(claims.dir, 'rush-claims'),
      TEMPORAL_TASK_QUEUE: `unpolled-${campaignId}`,
      EARLY_RETURN_MS: '2000',
    });
    const postRush = (key: string) => postDonation(rush.url, key, donationBody(campaignId));
    try {
      const keys = Array.from({ length: 60 }, (_, i) => `claims-full-${campaignId}-${i}`);
      claims.fill();
      let refused: string[];
      try {
        const responses = await Promise.all(keys.map(postRush));
        refused = keys.filter((_, i) => responses[i]?.status !== 202);
        expect(refused.length).toBeGreaterThan(0);
        for (const [i, key] of keys.entries()) {
          const response = responses[i];
          if (response && refused.includes(key)) await expectStoreUnavailable(response);
        }
      } finally {
        claims.free();
      }
      // Each key again: the refused ones are accepted now, the others replayed. A second process
      // on the same store asks for the same keys meanwhile: it reads the first one's claims (and
      // the record shapes those name, saved again once the disk had room), so it answers 409 or
      // the replay, never a record it cannot read.
      const second = await spawnApi(stack.config, {
        LMDB_PATH: path.join(answers.dir, 'rush'),
        LMDB_CLAIMS_PATH: path.join(claims.dir, 'rush-claims'),
        TEMPORAL_TASK_QUEUE: `unpolled-${campaignId}`,
      });
      const [again, meanwhile] = await Promise.all([
        Promise.all(keys.map(postRush)),
        new Promise((resolve) => setTimeout(resolve, 500))
          .then(() =>
            Promise.all(keys.map((key) => postDonation(second.url, key, donationBody(campaignId)))),
          )
          .finally(() => second.stop()),
      ]);
      for (const response of meanwhile) expect([202, 409]).toContain(response.status);
      for (const [i, key] of keys.entries()) {
        expect(again[i]?.status).toBe(202);
        const body = (await again[i]?.json()) as { id: string };
        expect(body.id).toBe(deriveUuid(clientAScope(key)));
        expect(again[i]?.headers.get('idempotent-replayed')).toBe(
          refused.includes(key) ? null : 'true',
        );
      }
    } finally {
      await rush.stop();
    }
  }, 120_000);

  it('gives up a claim it cannot remove, lets the retry take it over at once, and ends with none left', async () => {
    const api2 = await spawnApi(stack.config, {
      LMDB_PATH: path.join(answers.dir, 'both'),
      LMDB_CLAIMS_PATH: path.join(claims.dir, 'both-claims'),
      TEMPORAL_TASK_QUEUE: `unpolled-both-${campaignId}`,
      EARLY_RETURN_MS: '3000',
      // Longer than the test: no claim here ends by its lease.
      IDEMPOTENCY_LEASE_SECONDS: '3600',
    });
    const postBoth = (key: string) => postDonation(api2.url, key, donationBody(campaignId));
    const claimsInFlight = async () => {
      const text = await (await fetch(`${api2.url}/metrics`)).text();
      return Number(/^galang_lmdb_entries\{db="claims"\} (\d+)$/m.exec(text)?.[1]);
    };
    try {
      const keys = Array.from({ length: 60 }, (_, i) => `both-full-${campaignId}-${i}`);
      const pending = Promise.all(keys.map(postBoth));
      // Both disks fill while every request holds its claim (they wait 3 s on the workflow).
      await eventually(async () => ((await claimsInFlight()) === keys.length ? true : undefined));
      answers.fill();
      claims.fill();
      let refused: string[];
      try {
        const responses = await pending;
        refused = keys.filter((_, i) => responses[i]?.status !== 202);
        expect(refused.length).toBeGreaterThan(0);
        for (const [i, key] of keys.entries()) {
          const response = responses[i];
          if (response && refused.includes(key)) await expectStoreUnavailable(response);
        }
        // Claims that could not even be removed are abandoned, not waited for: how many depends
        // on when the disk filled (none, on a loaded machine); the retries below must pass either way.
        for (const response of await Promise.all(refused.map(postBoth))) {
          await expectStoreUnavailable(response);
        }
      } finally {
        answers.free();
        claims.free();
      }
      const again = await Promise.all(keys.map(postBoth));
      for (const [i, key] of keys.entries()) {
        expect(again[i]?.status).toBe(202);
        expect(((await again[i]?.json()) as { id: string }).id).toBe(deriveUuid(clientAScope(key)));
      }
      expect(await claimsInFlight()).toBe(0);
    } finally {
      await api2.stop();
    }
  }, 120_000);
});
