import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { createDatabase } from '../../src/db/database';
import type { Db } from '../../src/db/database';
import { buildApp } from '../../src/runtime/api-app';
import { CampaignRepository } from '../../src/campaigns/campaign-repository';
import { ProgressCache, progressCacheKey } from '../../src/campaigns/progress-cache';
import type { CachedProgress } from '../../src/campaigns/progress-cache';
import { createMetrics } from '../../src/observability/metrics';
import type { Metrics } from '../../src/observability/metrics';
import { creditDonation } from '../support/donations';
import { QueryCounter } from '../support/query-counter';
import { TcpProxy } from '../support/tcp-proxy';
import { createCampaign, eventually, startStack } from '../support/stack';
import type { Stack } from '../support/stack';
import { testState } from '../support/test-env';
import { closeRedis } from '../../src/db/redis-connection';

/** Another API instance on the stack's services, standing in for another process. */
interface Instance {
  app: FastifyInstance;
  url: string;
  metrics: Metrics;
  queries: QueryCounter;
  close(): Promise<void>;
}

async function startInstance(
  stack: Stack,
  options: { redis?: Redis; db?: Db; localTtlMs?: string } = {},
): Promise<Instance> {
  const metrics = createMetrics();
  const queries = new QueryCounter();
  const app = await buildApp({
    config: {
      ...stack.config,
      progress: {
        ...stack.config.progress,
        localTtlMs: Number(options.localTtlMs ?? stack.config.progress.localTtlMs),
      },
    },
    db: queries.wrap(options.db ?? stack.db),
    redis: options.redis ?? stack.redis,
    idempotencyStore: stack.store,
    temporal: stack.temporal,
    providers: new Map(),
    defaultProvider: 'simulator',
    metrics,
    logger: false,
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, url, metrics, queries, close: () => app.close() };
}

async function counter(metrics: Metrics, result: string): Promise<number> {
  const metric = await metrics.progress.requests.get();
  return metric.values.find((v) => v.labels.result === result)?.value ?? 0;
}

const progressOf = (url: string, campaignId: string, headers: Record<string, string> = {}) =>
  fetch(`${url}/v1/campaigns/${campaignId}/progress`, { headers });

describe('campaign progress under load and outages', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ noWorker: true });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('misses once, then answers from Redis and its own copy, with ETag and Cache-Control', async () => {
    const instance = await startInstance(stack, { localTtlMs: '200' });
    try {
      const campaignId = await createCampaign(stack.db, { goalAmount: 200_000 });
      await creditDonation(stack.db, campaignId, 50_000);

      const first = await progressOf(instance.url, campaignId);
      expect(first.status).toBe(200);
      expect(await first.json()).toEqual({
        campaignId,
        goalAmount: 200_000,
        confirmedAmount: 50_000,
        donationCount: 1,
        percent: 25,
        currency: 'IDR',
        updatedAt: expect.any(String) as string,
        stale: false,
      });
      const etag = first.headers.get('etag') ?? '';
      expect(etag).toBe(`"${campaignId}.1"`);
      expect(first.headers.get('cache-control')).toMatch(/max-age=\d+/);
      expect(await counter(instance.metrics, 'miss')).toBe(1);

      // Redis holds it with a jittered fresh period within ±10 % of the TTL.
      const cached = JSON.parse(
        (await stack.redis.get(progressCacheKey(campaignId))) ?? 'null',
      ) as CachedProgress;
      const ttlMs = stack.config.progress.ttlSeconds * 1000;
      expect(cached.freshUntil - Date.now()).toBeGreaterThan(ttlMs * 0.85);
      expect(cached.freshUntil - Date.now()).toBeLessThanOrEqual(ttlMs * 1.1);

      expect((await progressOf(instance.url, campaignId)).status).toBe(200);
      expect(await counter(instance.metrics, 'local')).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 250));
      expect((await progressOf(instance.url, campaignId)).status).toBe(200);
      expect(await counter(instance.metrics, 'hit')).toBe(1);

      const notModified = await progressOf(instance.url, campaignId, { 'if-none-match': etag });
      expect(notModified.status).toBe(304);
      expect(notModified.headers.get('etag')).toBe(etag);
      expect(instance.queries.count('campaign_totals')).toBe(1);
    } finally {
      await instance.close();
    }
  });

  it('serves a stale value marked stale while one caller refreshes it', async () => {
    const instance = await startInstance(stack, { localTtlMs: '0' });
    try {
      const campaignId = await createCampaign(stack.db);
      expect((await progressOf(instance.url, campaignId)).status).toBe(200);
      await creditDonation(stack.db, campaignId, 7_000);
      // The cached value's fresh period ends; it stays in Redis for the stale window.
      const key = progressCacheKey(campaignId);
      const cached = JSON.parse((await stack.redis.get(key)) ?? 'null') as CachedProgress;
      await stack.redis.set(key, JSON.stringify({ ...cached, freshUntil: Date.now() - 1 }));

      const stale = await Promise.all(
        Array.from({ length: 20 }, () => progressOf(instance.url, campaignId)),
      );
      // Each answer is either the stale value, marked so and not to be kept by caches, or
      // the refreshed one once the single refresh has landed.
      const bodies = [];
      for (const response of stale) {
        expect(response.status).toBe(200);
        const body = (await response.json()) as { stale: boolean; confirmedAmount: number };
        bodies.push(body);
        expect(response.headers.get('cache-control')).toBe(
          body.stale ? 'no-cache' : 'public, max-age=5, stale-while-revalidate=25',
        );
        expect(body.confirmedAmount).toBe(body.stale ? 0 : 7_000);
      }
      expect(bodies.some((body) => body.stale)).toBe(true);
      const fresh = await eventually(async () => {
        const body = (await (await progressOf(instance.url, campaignId)).json()) as {
          stale: boolean;
          confirmedAmount: number;
        };
        return body.stale ? undefined : body;
      });
      expect(fresh.confirmedAmount).toBe(7_000);
      // The first read, and one refresh for twenty stale answers.
      expect(instance.queries.count('campaign_totals')).toBe(2);
    } finally {
      await instance.close();
    }
  });

  it('never lets a slower rebuild overwrite a newer value', async () => {
    const cache = new ProgressCache(stack.redis, stack.config.progress);
    const campaigns = new CampaignRepository(stack.db);
    const campaignId = await createCampaign(stack.db);
    const old = await campaigns.progress(campaignId);
    await creditDonation(stack.db, campaignId, 1_000);
    const newer = await campaigns.progress(campaignId);
    if (!old || !newer) throw new Error('campaign missing');

    await cache.set(newer);
    await cache.set(old);
    expect(await cache.get(campaignId)).toMatchObject({ version: 1, confirmedAmount: 1_000 });
  });

  it('lets one of 1000 concurrent cold requests across two processes read Postgres', async () => {
    const [a, b] = [await startInstance(stack), await startInstance(stack)];
    try {
      const campaignId = await createCampaign(stack.db);
      await creditDonation(stack.db, campaignId, 25_000);
      const responses = await Promise.all(
        Array.from({ length: 1000 }, (_, i) => progressOf(i % 2 ? a.url : b.url, campaignId)),
      );
      const bodies = await Promise.all(responses.map((r) => r.json()));
      expect(responses.every((r) => r.status === 200)).toBe(true);
      expect(new Set(bodies.map((body) => JSON.stringify(body))).size).toBe(1);
      expect(bodies[0]).toMatchObject({ confirmedAmount: 25_000, stale: false });

      // One rebuild in all: the other process waited for its value instead of reading too.
      const queries = a.queries.count('campaign_totals') + b.queries.count('campaign_totals');
      expect(queries).toBe(1);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('reads Postgres behind an open breaker when Redis is down, and the last known value when Postgres is down too', async () => {
    const redisProxy = await TcpProxy.start('127.0.0.1:6379');
    const pgProxy = await TcpProxy.start('127.0.0.1:5432');
    const dbUrl = new URL(testState().databaseUrl);
    dbUrl.port = String(pgProxy.port);
    const db = createDatabase({
      connectionString: dbUrl.toString(),
      max: 5,
      connectionTimeoutMillis: 500,
    });
    const redis = new Redis(`redis://127.0.0.1:${String(redisProxy.port)}`, {
      keyPrefix: stack.config.redisKeyPrefix,
      maxRetriesPerRequest: 1,
      commandTimeout: 1_000,
    });
    redis.on('error', () => undefined);
    const instance = await startInstance(stack, { redis, db, localTtlMs: '0' });
    try {
      const seen = await createCampaign(stack.db);
      const unseen = await createCampaign(stack.db);
      expect((await progressOf(instance.url, seen)).status).toBe(200);

      redisProxy.set('blackhole');
      await creditDonation(stack.db, seen, 3_000);
      for (let i = 0; i < 10; i++) {
        const response = await progressOf(instance.url, seen);
        expect(response.status).toBe(200);
        expect(await response.json()).toMatchObject({ confirmedAmount: 3_000, stale: false });
      }
      expect(await instance.metrics.progress.breakerOpen.get()).toMatchObject({
        values: [{ value: 1 }],
      });
      // Open: requests no longer even send Redis a command.
      const sent = redisProxy.chunksFromClients;
      for (let i = 0; i < 5; i++) expect((await progressOf(instance.url, seen)).status).toBe(200);
      expect(redisProxy.chunksFromClients).toBe(sent);
      expect(await counter(instance.metrics, 'bypass')).toBe(15);

      pgProxy.set('refuse');
      const lastKnown = await progressOf(instance.url, seen);
      expect(lastKnown.status).toBe(200);
      expect(await lastKnown.json()).toMatchObject({ confirmedAmount: 3_000, stale: true });
      const nothingKnown = await progressOf(instance.url, unseen);
      expect(nothingKnown.status).toBe(503);
      expect(nothingKnown.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(nothingKnown.headers.get('retry-after')).toBe('5');

      // Both back (Redis restarted: connections reset): after the cooldown one probe closes
      // the breaker again.
      pgProxy.set('pass');
      redisProxy.set('refuse');
      redisProxy.set('pass');
      await eventually(async () => {
        await progressOf(instance.url, unseen);
        const { values } = await instance.metrics.progress.breakerOpen.get();
        return values[0]?.value === 0 ? true : undefined;
      }, 15_000);
    } finally {
      await instance.close();
      await closeRedis(redis);
      await db.destroy();
      await redisProxy.close();
      await pgProxy.close();
    }
  });
});
