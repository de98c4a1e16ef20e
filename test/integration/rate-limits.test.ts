import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import type { Config } from '../../src/config/config';
import { buildApp } from '../../src/runtime/api-app';
import { createMetrics } from '../../src/observability/metrics';
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
import { DEV_SIMULATOR_SECRET } from '../../src/config/config';
import { signStandardWebhook } from '../../src/providers/standard-webhooks';

const LIMITS = {
  RATE_LIMIT_WINDOW_MS: '60000',
  RATE_LIMIT_CLIENT_MAX: '3',
  RATE_LIMIT_OPERATOR_MAX: '2',
  RATE_LIMIT_PUBLIC_MAX: '4',
  RATE_LIMIT_FAILED_AUTH_MAX: '3',
  // The per-IP tests name their clients by X-Forwarded-For, sent by a proxy on loopback (where
  // inject's requests come from).
  TRUST_PROXY: '127.0.0.1',
  // Counters of this file's own, so other test files' requests do not spend its budgets.
  REDIS_KEY_PREFIX: `${testState().redisKeyPrefix}rate-limits-${randomUUID()}:`,
};

/** @fastify/rate-limit on the real app: per key in Redis, per IP in-process, 429 problems. */
describe('rate limits', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: LIMITS, autoPayMs: -1 });
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
      providers: stack.providers,
      defaultProvider: 'simulator',
      metrics: createMetrics(),
      logger: false,
    });

  // Each test's API processes count in Redis under a prefix of the test's own and keep their
  // per-process counts in memory, so no test spends another's budget, in any order.
  const opened: { app: FastifyInstance; redis: Redis }[] = [];
  afterEach(async () => {
    for (const { app, redis } of opened.splice(0)) {
      await app.close();
      await closeRedis(redis);
    }
  });
  const freshApi = async (keyPrefix = `${LIMITS.REDIS_KEY_PREFIX}${randomUUID()}:`) => {
    const redis = new Redis(stack.config.redisUrl, { keyPrefix });
    const app = await anotherApi(stack.config, redis);
    opened.push({ app, redis });
    return app;
  };
  const readDonation = (app: FastifyInstance, secret: string) =>
    app.inject({
      method: 'GET',
      url: `/v1/donations/${randomUUID()}`,
      headers: { authorization: `Bearer ${secret}` },
    });

  it('answers 429 with Retry-After and RateLimit headers once a client key spends its budget', async () => {
    const api = await freshApi();
    const campaignId = await createCampaign(stack.db);
    const post = () =>
      api.inject({
        method: 'POST',
        url: '/v1/donations',
        headers: {
          authorization: `Bearer ${CLIENT_SECRET}`,
          'idempotency-key': `rl-${randomUUID()}`,
        },
        payload: donationBody(campaignId),
      });
    for (let i = 0; i < 3; i++) {
      const accepted = await post();
      expect(accepted.statusCode).toBe(202);
      expect(accepted.headers['ratelimit-limit']).toBe('3');
      expect(accepted.headers['ratelimit-remaining']).toBe(String(2 - i));
    }
    const refused = await post();
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers['ratelimit-limit']).toBe('3');
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    expect(Number(refused.headers['ratelimit-reset'])).toBe(retryAfter);
    expect(refused.json()).toMatchObject({
      type: '/problems/rate-limited',
      status: 429,
      code: 'rate-limited',
    });

    // The budget is the key's: another client still gets in.
    expect((await readDonation(api, OTHER_CLIENT_SECRET)).statusCode).toBe(404);
  });

  it('limits each operator key on the operator routes', async () => {
    const api = await freshApi();
    const campaignId = await createCampaign(stack.db);
    const read = () =>
      api.inject({
        method: 'GET',
        url: `/v1/campaigns/${campaignId}`,
        headers: { authorization: `Bearer ${OPERATOR_SECRET}` },
      });
    expect((await read()).statusCode).toBe(200);
    expect((await read()).statusCode).toBe(200);
    const refused = await read();
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
  });

  it('limits public reads per client IP', async () => {
    const api = await freshApi();
    const campaignId = await createCampaign(stack.db);
    const read = (ip: string) =>
      api.inject({
        method: 'GET',
        url: `/v1/campaigns/${campaignId}/progress`,
        headers: { 'x-forwarded-for': ip },
      });
    for (let i = 0; i < 4; i++) {
      const answer = await read('198.51.100.7');
      expect(answer.statusCode).toBe(200);
      // A public, cacheable answer carries no one requester's count.
      expect(answer.headers['ratelimit-remaining']).toBeUndefined();
    }
    const refused = await read('198.51.100.7');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['ratelimit-limit']).toBe('4');
    expect((await read('203.0.113.9')).statusCode).toBe(200);
    // Webhooks and health checks are never limited.
    for (let i = 0; i < 6; i++) {
      expect((await api.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    }
  });

  it('limits every public read per client IP: probes, metrics, the page, the wall, the docs', async () => {
    const api = await freshApi();
    const wall = `/v1/campaigns/${await createCampaign(stack.db)}/donations`;
    for (const url of ['/readyz', '/metrics', '/demo/config.json', wall, '/docs/json']) {
      const read = () => api.inject({ url, headers: { 'x-forwarded-for': '198.51.100.20' } });
      for (let i = 0; i < 4; i++)
        expect({ url, status: (await read()).statusCode }).not.toEqual({ url, status: 429 });
      const refused = await read();
      expect({ url, status: refused.statusCode }).toEqual({ url, status: 429 });
      expect(refused.json()).toMatchObject({ code: 'rate-limited' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    }
  });

  it('counts IPv6 clients by their /64, as the plugin’s own key generator does', async () => {
    const api = await freshApi();
    const campaignId = await createCampaign(stack.db);
    const read = (ip: string) =>
      api.inject({
        url: `/v1/campaigns/${campaignId}/progress`,
        headers: { 'x-forwarded-for': ip },
      });
    // One subscriber's /64 has 2^64 addresses: changing the last bits buys no new budget.
    for (let i = 1; i <= 4; i++) expect((await read(`2001:db8:1:2::${i}`)).statusCode).toBe(200);
    expect((await read('2001:db8:1:2:ffff:ffff:ffff:fffe')).statusCode).toBe(429);
    expect((await read('2001:db8:1:3::1')).statusCode).toBe(200);
  });

  it('refuses an address once its failed authentications are spent, whatever key it sends next', async () => {
    const api = await freshApi();
    const readAs = (ip: string, secret: string) =>
      api.inject({
        url: `/v1/donations/${randomUUID()}`,
        headers: { authorization: `Bearer ${secret}`, 'x-forwarded-for': ip },
      });
    const guesser = '198.51.100.30';
    // Requests that authenticate spend nothing of it.
    expect((await readAs(guesser, CLIENT_SECRET)).statusCode).toBe(404);
    expect((await readAs(guesser, CLIENT_SECRET)).statusCode).toBe(404);
    for (let i = 0; i < 3; i++) {
      expect((await readAs(guesser, `guess-${i}-0123456789abcdef`)).statusCode).toBe(401);
    }
    const refused = await readAs(guesser, 'guess-3-0123456789abcdef');
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 'rate-limited' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // The right key from that address waits too: a guess that hits is no better than a miss.
    expect((await readAs(guesser, CLIENT_SECRET)).statusCode).toBe(429);
    // Other addresses are not affected.
    expect((await readAs('198.51.100.31', OTHER_CLIENT_SECRET)).statusCode).toBe(404);
  });

  it('counts only the webhooks that fail verification, never genuine notifications', async () => {
    const api = await freshApi();
    let sequence = 0;
    const notify = (ip: string, secret = DEV_SIMULATOR_SECRET) => {
      const id = `msg_rate_${randomUUID()}`;
      const timestamp = Math.floor(Date.now() / 1000);
      const body = JSON.stringify({
        type: 'payment.updated',
        data: {
          id: `sim_rate_${sequence++}`,
          reference: randomUUID(),
          status: 'settled',
          amount: 1_000,
          currency: 'IDR',
          occurred_at: new Date().toISOString(),
        },
      });
      return api.inject({
        method: 'POST',
        url: '/v1/webhooks/simulator',
        payload: body,
        headers: {
          'content-type': 'application/json',
          'x-forwarded-for': ip,
          'webhook-id': id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signStandardWebhook(secret, id, timestamp, body),
        },
      });
    };
    const provider = '192.0.2.40';
    const forged = `whsec_${Buffer.from('not-the-secret-0123456789').toString('base64')}`;
    // More genuine notifications than any budget: none is refused.
    for (let i = 0; i < 6; i++) expect((await notify(provider)).statusCode).not.toBe(429);
    for (let i = 0; i < 3; i++) expect((await notify(provider, forged)).statusCode).toBe(401);
    expect((await notify(provider, forged)).statusCode).toBe(429);
    expect((await notify('192.0.2.41')).statusCode).not.toBe(429);
  });

  it('shares a key’s budget across API processes through Redis', async () => {
    const shared = `${LIMITS.REDIS_KEY_PREFIX}${randomUUID()}:`;
    const [one, other] = [await freshApi(shared), await freshApi(shared)];
    expect((await readDonation(one, OTHER_CLIENT_SECRET)).statusCode).toBe(404);
    expect((await readDonation(other, OTHER_CLIENT_SECRET)).statusCode).toBe(404);
    expect((await readDonation(one, OTHER_CLIENT_SECRET)).statusCode).toBe(404);
    expect((await readDonation(other, OTHER_CLIENT_SECRET)).statusCode).toBe(429);
    expect((await readDonation(one, OTHER_CLIENT_SECRET)).statusCode).toBe(429);
  });

  it('falls back to a per-process limit while Redis is down, neither open nor shut', async () => {
    const proxy = await TcpProxy.start(new URL(stack.config.redisUrl).host);
    const redis = new Redis(`redis://${proxy.address}`, {
      keyPrefix: `${LIMITS.REDIS_KEY_PREFIX}outage-${randomUUID()}:`,
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
