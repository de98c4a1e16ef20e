import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import type { Config } from '../../src/config/config';
import { buildApp } from '../../src/runtime/api-app';
import { createMetrics } from '../../src/observability/metrics';
import { postDonation } from '../support/donations';
import {
  CLIENT_SECRET,
  OPERATOR_SECRET,
  OTHER_CLIENT_SECRET,
  createCampaign,
  donationBody,
  startStack,
} from '../support/stack';
import type { Stack } from '../support/stack';
import { TcpProxy } from '../support/tcp-proxy';
import { testState } from '../support/test-env';
import { closeRedis } from '../../src/db/redis-connection';

const LIMITS = {
  RATE_LIMIT_WINDOW_MS: '60000',
  RATE_LIMIT_CLIENT_MAX: '3',
  RATE_LIMIT_OPERATOR_MAX: '2',
  RATE_LIMIT_PUBLIC_MAX: '4',
  // The per-IP test names its clients by X-Forwarded-For.
  TRUST_PROXY: 'true',
  // Counters of this file's own, so other test files' requests do not spend its budgets.
  REDIS_KEY_PREFIX: `${testState().redisKeyPrefix}rate-limits-${randomUUID()}:`,
};

/** @fastify/rate-limit on the real app: per key in Redis, per IP in-process, 429 problems. */
describe('rate limits', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: LIMITS });
  });
  afterAll(async () => {
    await stack.stop();
  });

  /** Another API process of the same deployment: same config and database, its own Redis client. */
  const anotherApi = (config: Config, redis: Redis): Promise<FastifyInstance> =>
    buildApp({
      config,
      db: stack.db,
      redis,
      idempotencyStore: stack.store,
      temporal: stack.temporal,
      providers: new Map(),
      defaultProvider: 'simulator',
      metrics: createMetrics(),
      logger: false,
    });
  const readDonation = (app: FastifyInstance, secret: string) =>
    app.inject({
      method: 'GET',
      url: `/v1/donations/${randomUUID()}`,
      headers: { authorization: `Bearer ${secret}` },
    });

  it('answers 429 with Retry-After and RateLimit headers once a client key spends its budget', async () => {
    const campaignId = await createCampaign(stack.db);
    const post = () => postDonation(stack.apiUrl, `rl-${randomUUID()}`, donationBody(campaignId));
    for (let i = 0; i < 3; i++) {
      const accepted = await post();
      expect(accepted.status).toBe(202);
      expect(accepted.headers.get('ratelimit-limit')).toBe('3');
      expect(accepted.headers.get('ratelimit-remaining')).toBe(String(2 - i));
    }
    const refused = await post();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers.get('ratelimit-limit')).toBe('3');
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(refused.headers.get('ratelimit-reset'))).toBe(retryAfter);
    expect(await refused.json()).toMatchObject({
      type: '/problems/rate-limited',
      status: 429,
      code: 'rate-limited',
    });

    // The budget is the key's: another client still gets in.
    const other = await fetch(`${stack.apiUrl}/v1/donations/${randomUUID()}`, {
      headers: { authorization: `Bearer ${OTHER_CLIENT_SECRET}` },
    });
    expect(other.status).toBe(404);
  });

  it('limits each operator key on the operator routes', async () => {
    const campaignId = await createCampaign(stack.db);
    const read = () =>
      fetch(`${stack.apiUrl}/v1/campaigns/${campaignId}`, {
        headers: { authorization: `Bearer ${OPERATOR_SECRET}` },
      });
    expect((await read()).status).toBe(200);
    expect((await read()).status).toBe(200);
    const refused = await read();
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).not.toBeNull();
  });

  it('limits public reads per client IP', async () => {
    const campaignId = await createCampaign(stack.db);
    const read = (ip: string) =>
      fetch(`${stack.apiUrl}/v1/campaigns/${campaignId}/progress`, {
        headers: { 'x-forwarded-for': ip },
      });
    for (let i = 0; i < 4; i++) {
      const answer = await read('198.51.100.7');
      expect(answer.status).toBe(200);
      // A public, cacheable answer carries no one requester's count.
      expect(answer.headers.get('ratelimit-remaining')).toBeNull();
    }
    const refused = await read('198.51.100.7');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit-limit')).toBe('4');
    expect((await read('203.0.113.9')).status).toBe(200);
    // Webhooks and health checks are never limited.
    for (let i = 0; i < 6; i++) {
      expect((await fetch(`${stack.apiUrl}/healthz`)).status).toBe(200);
    }
  });

  it('shares a key’s budget across API processes through Redis', async () => {
    const redis = new Redis(stack.config.redisUrl, { keyPrefix: stack.config.redisKeyPrefix });
    const other = await anotherApi(stack.config, redis);
    try {
      // client-b spent one request above; two more here, one in the other process.
      expect((await readDonation(stack.app, OTHER_CLIENT_SECRET)).statusCode).toBe(404);
      expect((await readDonation(other, OTHER_CLIENT_SECRET)).statusCode).toBe(404);
      expect((await readDonation(other, OTHER_CLIENT_SECRET)).statusCode).toBe(429);
      expect((await readDonation(stack.app, OTHER_CLIENT_SECRET)).statusCode).toBe(429);
    } finally {
      await other.close();
      await closeRedis(redis);
    }
  });

  it('falls back to a per-process limit while Redis is down, neither open nor shut', async () => {
    const proxy = await TcpProxy.start(new URL(stack.config.redisUrl).host);
    const redis = new Redis(`redis://${proxy.address}`, {
      keyPrefix: `${LIMITS.REDIS_KEY_PREFIX}outage:`,
      maxRetriesPerRequest: 1,
      connectTimeout: 500,
      // Closed while Redis does not answer: ioredis waits this long for the socket before
      // destroying it, with a timer that would otherwise hold the Jest worker for 2 s.
      disconnectTimeout: 200,
    });
    redis.on('error', () => undefined);
    const app = await anotherApi(stack.config, redis);
    try {
      proxy.set('blackhole');
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++)
        statuses.push((await readDonation(app, CLIENT_SECRET)).statusCode);
      // Not everything let through, not everything refused: this process's own count of 3.
      expect(statuses).toEqual([404, 404, 404, 429, 429]);
      const refused = await readDonation(app, CLIENT_SECRET);
      expect(refused.headers['retry-after']).toBeDefined();
      expect(refused.json()).toMatchObject({ code: 'rate-limited' });
    } finally {
      await app.close();
      await closeRedis(redis);
      await proxy.close();
    }
  });
});
