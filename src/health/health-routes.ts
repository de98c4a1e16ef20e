import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Client } from '@temporalio/client';
import type { Redis } from 'ioredis';
import { sql } from 'kysely';
import type { Db } from '../db/database';
import type { IdempotencyStore } from '../idempotency/idempotency-store';

export interface HealthDeps {
  db: Db;
  redis: Redis;
  temporal: Client;
  store: IdempotencyStore;
  /** How long each dependency may take to answer. */
  timeoutMs?: number;
}

const Check = Type.Union([Type.Literal('up'), Type.Literal('down')]);
const Readiness = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('unready')]),
  checks: Type.Object({ postgres: Check, redis: Check, temporal: Check, lmdb: Check }),
});

/**
 * `GET /healthz`: the process is up (for restarts). `GET /readyz`: every dependency answers,
 * each reported by name (for load balancers and operators); 503 when any does not.
 */
export const healthRoutes: FastifyPluginAsyncTypebox<HealthDeps> = async (app, deps) => {
  const timeoutMs = deps.timeoutMs ?? 1_000;
  const probe = async (check: () => Promise<unknown>): Promise<'up' | 'down'> => {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        check(),
        new Promise((_, reject) => {
          timer = setTimeout(() => {
            reject(new Error('timeout'));
          }, timeoutMs);
        }),
      ]);
      return 'up';
    } catch {
      return 'down';
    } finally {
      clearTimeout(timer);
    }
  };

  app.get(
    '/healthz',
    {
      // Not limited: it answers from memory, as cheaply as a 429 would, and a refused liveness
      // probe gets a healthy process restarted.
      config: { auth: 'none', rateLimit: false },
      schema: { response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    { config: { auth: 'none' }, schema: { response: { 200: Readiness, 503: Readiness } } },
    async (_request, reply) => {
      const [postgres, redis, temporal, lmdb] = await Promise.all([
        probe(() => sql`select 1`.execute(deps.db)),
        probe(() => deps.redis.ping()),
        probe(() =>
          deps.temporal.connection.withDeadline(Date.now() + timeoutMs, () =>
            deps.temporal.workflowService.getSystemInfo({}),
          ),
        ),
        probe(async () => deps.store.stats()),
      ]);
      const checks = { postgres, redis, temporal, lmdb };
      const ready = Object.values(checks).every((c) => c === 'up');
      return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'unready', checks });
    },
  );
};
