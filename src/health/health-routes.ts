import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Client } from '@temporalio/client';
import type { Redis } from 'ioredis';
import { sql } from 'kysely';
import type { Db } from '../db/database';
import type { IdempotencyStore } from '../idempotency/idempotency-store';

export interface HealthDeps {
  /** The pool webhooks are recorded through: what this node must have to stay in rotation. */
  db: Db;
  redis: Redis;
  temporal: Client;
  store: IdempotencyStore;
  /** Whether boot has finished; a node still starting is not ready. */
  booted?: () => boolean;
  /** How long each dependency may take to answer. */
  timeoutMs?: number;
}

const Check = Type.Union([Type.Literal('up'), Type.Literal('down')]);
const Readiness = Type.Object({
  status: Type.Union([
    Type.Literal('ready'),
    Type.Literal('degraded'),
    Type.Literal('unready'),
    Type.Literal('starting'),
  ]),
  checks: Type.Object({ postgres: Check, redis: Check, temporal: Check, lmdb: Check }),
  /** The dependencies that are down without taking the node out of rotation. */
  degraded: Type.Array(Type.Union([Type.Literal('redis'), Type.Literal('temporal')])),
});

/**
 * `GET /healthz`: the process is up (for restarts). `GET /readyz`: whether a load balancer
 * should send this node traffic, each dependency reported by name. The node is ready while it
 * can record a webhook durably (Postgres) and use its own LMDB store; Redis (a cache) or
 * Temporal being down only degrades it (POSTs answer 503 with Retry-After, webhooks are still
 * recorded and delivered later), so a blip of either does not pull every node at once. 503
 * while booting or when Postgres or LMDB is down.
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
      config: { auth: 'none', rateLimit: false, duringBoot: true },
      schema: { response: { 200: Type.Object({ status: Type.Literal('ok') }) } },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    '/readyz',
    {
      config: { auth: 'none', duringBoot: true },
      schema: { response: { 200: Readiness, 503: Readiness } },
    },
    async (_request, reply) => {
      const [postgres, redis, temporal, lmdb] = await Promise.all([
        probe(() => sql`select 1`.execute(deps.db)),
        probe(() => deps.redis.ping()),
        // The namespace, not just the server: a missing one is a service that cannot work.
        probe(() =>
          deps.temporal.connection.withDeadline(Date.now() + timeoutMs, () =>
            deps.temporal.workflowService.describeNamespace({
              namespace: deps.temporal.options.namespace,
            }),
          ),
        ),
        // Readable, and writable: after a failed write (a full disk) a small write is tried.
        probe(async () => {
          deps.store.stats();
          if (!deps.store.writable && !(await deps.store.probeWrites())) {
            throw new Error('the idempotency store cannot write');
          }
        }),
      ]);
      const checks = { postgres, redis, temporal, lmdb };
      const degraded = (['redis', 'temporal'] as const).filter((name) => checks[name] === 'down');
      const booted = deps.booted?.() ?? true;
      const serving = postgres === 'up' && lmdb === 'up';
      const status = !booted
        ? 'starting'
        : !serving
          ? 'unready'
          : degraded.length > 0
            ? 'degraded'
            : 'ready';
      return reply
        .code(booted && serving ? 200 : 503)
        .send({ status, checks, degraded: [...degraded] });
    },
  );
};
