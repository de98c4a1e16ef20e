import { hash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import { loadConfig } from '../src/config/config';
import type { Config } from '../src/config/config';
import { createDatabase } from '../src/db/database';
import { buildApp } from '../src/runtime/api-app';
import { fingerprint } from '../src/idempotency/fingerprint';
import { scopedKey } from '../src/idempotency/idempotency-key';
import { removeStoreFiles } from '../src/idempotency/claims-location';
import { IdempotencyStore } from '../src/idempotency/idempotency-store';
import { createMetrics } from '../src/observability/metrics';
import { createTemporalClient } from '../src/temporal/temporal-client';
import { openRedis } from '../src/db/redis-connection';

/**
 * Servers for the route benchmark, each in its own process so the load generator does not share
 * its event loop: `bare` is a plain Fastify POST route answering the same JSON; `full` is
 * galang's real app answering a replay of a completed key.
 */
export const BENCH_SECRET = 'bench-secret-1';
export const BENCH_KEY = 'bench-replay-key';
export const benchBody = {
  campaignId: 'demo',
  amount: 50_000,
  currency: 'IDR',
  donor: { name: 'Ani', email: 'ani@example.com', anonymous: false },
  message: 'Semangat!',
  paymentMethod: 'qris',
};
export const benchAnswerObject = {
  id: '1b4e28ba-2fa1-81d2-883f-0016d3cca427',
  status: 'PENDING',
  campaignId: 'demo',
  amount: 50_000,
  currency: 'IDR',
  links: { self: '/v1/donations/1b4e28ba-2fa1-81d2-883f-0016d3cca427' },
};
export const benchAnswer = JSON.stringify(benchAnswerObject);

/** What the progress route answers for the bench campaign, for the bare baseline to send. */
export const benchProgressAnswer = {
  campaignId: 'bench-progress',
  goalAmount: 1_000_000_000,
  confirmedAmount: 123_456_000,
  donationCount: 2_469,
  percent: 12.34,
  currency: 'IDR',
  updatedAt: '2026-11-30T00:00:00.000Z',
  stale: false,
};

/** The limiter still runs on every request (its cost is measured), but never refuses one. */
const NO_LIMITS = {
  RATE_LIMIT_CLIENT_MAX: '1000000000',
  RATE_LIMIT_PUBLIC_MAX: '1000000000',
};

async function main(): Promise<void> {
  const [kind = 'bare'] = process.argv.slice(2);
  if (kind === 'progress-bare') {
    const app = Fastify({ logger: false });
    app.get('/v1/campaigns/:id/progress', async () => benchProgressAnswer);
    report(await app.listen({ port: 0, host: '127.0.0.1' }));
    return;
  }
  if (kind === 'progress-full') {
    // The real app on the bench database and Redis; `bench/progress.ts` passes their URLs.
    const config = loadConfig({
      ...process.env,
      ...NO_LIMITS,
      NODE_ENV: 'test',
      TEMPORAL_ADDRESS: '127.0.0.1:1',
    });
    const store = new IdempotencyStore({
      path: tempStorePath('galang-bench-progress-'),
      ttlSeconds: 86_400,
    });
    const app = await realApp(config, store, openRedis(config), 5);
    report(await app.listen({ port: 0, host: '127.0.0.1' }));
    return;
  }
  if (kind === 'bare') {
    const app = Fastify({ logger: false });
    // What a plain handler does: return the object, Fastify serializes it.
    app.post('/v1/donations', async (_request, reply) => reply.code(202).send(benchAnswerObject));
    report(await app.listen({ port: 0, host: '127.0.0.1' }));
    return;
  }
  const lmdbPath = tempStorePath('galang-bench-route-');
  const config = loadConfig({
    ...NO_LIMITS,
    NODE_ENV: 'test',
    API_KEYS: `bench:${BENCH_SECRET}`,
    LMDB_PATH: lmdbPath,
    TEMPORAL_ADDRESS: '127.0.0.1:1',
  });
  const store = new IdempotencyStore({ path: lmdbPath, ttlSeconds: 86_400 });
  const key = scopedKey({
    clientId: 'bench',
    method: 'POST',
    route: '/v1/donations',
    key: BENCH_KEY,
  });
  // Seeded as the original request would have left it: canonical and raw digests of the body.
  const claim = await store.claim(
    key,
    fingerprint(benchBody),
    hash('sha256', JSON.stringify(benchBody), 'base64url'),
  );
  if (claim.outcome !== 'claimed') throw new Error('could not seed the replay');
  await store.complete(key, claim.claimId, {
    statusCode: 202,
    headers: { 'content-type': 'application/json; charset=utf-8', location: '/v1/donations/x' },
    body: benchAnswer,
  });
  // Postgres is never touched on the replay path, Redis only by the rate limiter (one counter
  // per client key); both present because the app is real.
  const app = await realApp(config, store, new Redis(config.redisUrl, { lazyConnect: true }), 1);
  report(await app.listen({ port: 0, host: '127.0.0.1' }));
}

/** galang's real app, as the entry points build it, on the given store and Redis client. */
function realApp(config: Config, store: IdempotencyStore, redis: Redis, poolSize: number) {
  return buildApp({
    config,
    db: createDatabase({ connectionString: config.databaseUrl, max: poolSize }),
    redis,
    idempotencyStore: store,
    temporal: createTemporalClient(config.temporal),
    metrics: createMetrics(),
    providers: new Map(),
    defaultProvider: 'simulator',
    logger: false,
  });
}

/** A fresh store folder, removed with its claims when this server exits. */
function tempStorePath(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  process.once('exit', () => {
    removeStoreFiles(dir);
  });
  return dir;
}

function report(url: string): void {
  process.stdout.write(`${JSON.stringify({ url })}\n`);
}

if (require.main === module) {
  // A clean exit on the benchmark's kill, so `--cpu-prof` (BENCH_NODE_ARGS) writes its profile.
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(0));
  void main();
}
