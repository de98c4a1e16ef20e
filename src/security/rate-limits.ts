import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { RateLimitOptions } from '@fastify/rate-limit';
import type { FastifyPluginAsync, FastifyRequest, RouteOptions } from 'fastify';
import type { Redis } from 'ioredis';
import type { RateLimitConfig } from '../config/http-config';
import { AppError } from '../errors/error-catalogue';
import { fallbackRateLimitStore } from './fallback-rate-limit-store';

export interface RateLimitsOptions {
  limits: RateLimitConfig;
  redis: Redis;
}

/**
 * @fastify/rate-limit on the routes that cost something: per client or operator key on the
 * authenticated routes (a client key cannot start unlimited workflows and provider payments, and
 * one Stripe account's rate limit is shared by every donor), counted in Redis for every API
 * process (see {@link fallbackRateLimitStore} for outages); per IP on the public reads, counted
 * in each process, because a Redis round trip on every progress read would cost more than most
 * of those reads do (they are answered from the process's own copy).
 * Webhooks, health checks, /metrics and /docs are not limited: providers and probes must get
 * through. A route opts out or sets its own policy with `config.rateLimit`.
 *
 * Registered after the auth plugin: both attach `onRequest` hooks per route, so the key's check
 * runs first and the limiter knows whose request it counts.
 */
const rateLimitsPlugin: FastifyPluginAsync<RateLimitsOptions> = async (app, { limits, redis }) => {
  app.addHook('onRoute', (route) => {
    if (route.config?.rateLimit !== undefined) return;
    const policy = policyFor(route, limits);
    if (policy) route.config = { ...route.config, rateLimit: policy };
  });
  const log = app.log;
  await app.register(rateLimit, {
    global: false,
    // After the idempotency layer has answered replays (preValidation): a replay starts nothing,
    // so it spends no budget and costs no Redis round trip.
    hook: 'preHandler',
    timeWindow: limits.windowMs,
    enableDraftSpec: true,
    keyGenerator: keyOf,
    store: fallbackRateLimitStore({
      redis,
      nameSpace: 'rate-limit:',
      onStateChange: (state) => {
        log.warn({ state }, 'rate limiter: Redis circuit (open: counting per process)');
      },
    }),
    errorResponseBuilder: (_request, context) =>
      new AppError('rate-limited', {
        retryAfter: Math.max(1, Math.ceil(context.ttl / 1000)),
        detail: `At most ${context.max} requests per ${limits.windowMs / 1000} s; retry in ${context.after}.`,
      }),
  });
};

const NO_HEADERS = {
  'ratelimit-limit': false,
  'ratelimit-remaining': false,
  'ratelimit-reset': false,
} as const;

/** Whose budget a request spends: its key's principal, else its address. */
function keyOf(request: FastifyRequest): string {
  const principal = request.principal;
  return principal ? `${principal.kind}:${principal.id}` : `ip:${request.ip}`;
}

function policyFor(route: RouteOptions, limits: RateLimitConfig): RateLimitOptions | undefined {
  switch (route.config?.auth) {
    case 'client':
      return { max: limits.clientMax };
    // The codec role's key sits in the Web UI's proxy: the operators' budget, per key.
    case 'operator':
    case 'codec':
      return { max: limits.operatorMax };
    case 'client-or-operator':
      return {
        max: (request: FastifyRequest) =>
          request.principal?.kind === 'operator' ? limits.operatorMax : limits.clientMax,
      };
    case 'none': {
      const methods = [route.method].flat();
      const read = methods.includes('GET') || methods.includes('HEAD');
      // Read by the store's `child`: count in this process only. No RateLimit-* headers until
      // refused: these answers are `public` and shared by CDNs, so one IP's count would be
      // everyone's.
      const perProcess: RateLimitOptions = Object.assign(
        { max: limits.publicMax, addHeadersOnExceeding: NO_HEADERS },
        { perProcess: true },
      );
      return read && route.url.startsWith('/v1/') ? perProcess : undefined;
    }
    default:
      return undefined;
  }
}

export default fp(rateLimitsPlugin, { name: 'rate-limits', dependencies: ['auth'] });
