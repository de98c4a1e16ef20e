import fp from 'fastify-plugin';
import rateLimit from '@fastify/rate-limit';
import type { RateLimitOptions, RateLimitPluginOptions } from '@fastify/rate-limit';
import type { FastifyPluginAsync, FastifyRequest, RouteOptions } from 'fastify';
import type { Redis } from 'ioredis';
import type { RateLimitConfig } from '../config/http-config';
import { AppError } from '../errors/error-catalogue';
import { fallbackRateLimitStore } from './fallback-rate-limit-store';
import failedAuthLimit, { addressKey } from './failed-auth-limit';

export interface RateLimitsOptions {
  limits: RateLimitConfig;
  redis: Redis;
}

/**
 * @fastify/rate-limit on every route but the liveness probe: per client or operator key on the
 * authenticated routes (a client key cannot start unlimited workflows and provider payments, and
 * one Stripe account's rate limit is shared by every donor), counted in Redis for every API
 * process (see {@link fallbackRateLimitStore} for outages); per IP on every public read (the
 * progress, /readyz, /metrics, the campaign page), counted in each process, because a Redis
 * round trip on every progress read would cost more than most of those reads do (they are
 * answered from the process's own copy). Webhooks spend only the failed-authentication budget
 * ({@link failedAuthLimit}): a provider's genuine notifications are never refused for their
 * number. A route opts out or sets its own policy with `config.rateLimit`.
 *
 * Registered after the auth plugin: the limiter runs in `preHandler`, after the key's check, so
 * it knows whose request it counts; the failed-authentication check runs before the key's.
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
      rateLimitedError(context.ttl, `${context.max} requests per ${limits.windowMs / 1000} s`),
  });
  await app.register(failedAuthLimit, { max: limits.failedAuthMax, windowMs: limits.windowMs });
};

function rateLimitedError(ttlMs: number, budget: string): AppError {
  const retryAfter = Math.max(1, Math.ceil(ttlMs / 1000));
  return new AppError('rate-limited', {
    retryAfter,
    detail: `At most ${budget}; retry in ${retryAfter} s.`,
  });
}

/**
 * The public per-IP limit as a scope's own @fastify/rate-limit, counted in this process: for
 * routes no onRoute hook of the API sees (Swagger UI's, registered before the auth plugin) and
 * for the worker's metrics server.
 */
export function publicRateLimit(limits: RateLimitConfig): RateLimitPluginOptions {
  return {
    global: true,
    max: limits.publicMax,
    timeWindow: limits.windowMs,
    enableDraftSpec: true,
    keyGenerator: (request) => `ip:${addressKey(request)}`,
    addHeadersOnExceeding: NO_HEADERS,
    errorResponseBuilder: (_request, context) =>
      rateLimitedError(context.ttl, `${context.max} requests per ${limits.windowMs / 1000} s`),
  };
}

const NO_HEADERS = {
  'ratelimit-limit': false,
  'ratelimit-remaining': false,
  'ratelimit-reset': false,
} as const;

/**
 * Whose budget a request spends: its key's principal, else its address (IPv6 by /64, as the
 * plugin's own key generator has it, which a custom generator replaces).
 */
function keyOf(request: FastifyRequest): string {
  const principal = request.principal;
  return principal ? `${principal.kind}:${principal.id}` : `ip:${addressKey(request)}`;
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
      // refused: the progress is `public` and shared by CDNs, so one IP's count would be
      // everyone's. Public writes are the webhooks: failed authentications only.
      const perProcess: RateLimitOptions = Object.assign(
        { max: limits.publicMax, addHeadersOnExceeding: NO_HEADERS },
        { perProcess: true },
      );
      return read ? perProcess : undefined;
    }
    default:
      return undefined;
  }
}

export default fp(rateLimitsPlugin, { name: 'rate-limits', dependencies: ['auth'] });
