import fp from 'fastify-plugin';
import type {
  FastifyPluginAsync,
  FastifyRequest,
  onRequestAsyncHookHandler,
  onSendAsyncHookHandler,
  RouteOptions,
} from 'fastify';
import { normalizeIP } from '@fastify/rate-limit';
import { AppError } from '../errors/error-catalogue';
import { withFirstHook, withHook } from '../http/route-hooks';

export interface FailedAuthLimitOptions {
  /** Failed authentications an address may make per window before it is refused. */
  max: number;
  windowMs: number;
}

/**
 * A client's address as @fastify/rate-limit's own key generator has it: IPv4 as it is (an
 * IPv4-mapped IPv6 address as IPv4), IPv6 grouped by its /64, the block one subscriber gets.
 * Counting full IPv6 addresses would give every client 2^64 budgets.
 */
export function addressKey(request: FastifyRequest): string {
  return normalizeIP(request.ip);
}

/**
 * A per-address budget of failed authentications, with @fastify/rate-limit's limiter (it must
 * be registered first): every 401 a route answers (an unknown bearer key, a wrong metrics token,
 * a webhook whose signature does not verify) spends one; once they are spent, every request of
 * that address to such a route is refused 429 until the window passes, before its credentials
 * are looked at, so guessing costs a window per budget. Requests that authenticate never count:
 * a provider's genuine notifications are never limited by this. Counted in each process, so
 * checking costs no Redis round trip per request: N API processes allow N× the budget.
 */
const failedAuthLimit: FastifyPluginAsync<FailedAuthLimitOptions> = async (app, options) => {
  const limiter = app.createRateLimit({
    max: options.max,
    timeWindow: options.windowMs,
    keyGenerator: (request) => `failed-auth:${addressKey(request)}`,
    // Read by galang's store (fallback-rate-limit-store.ts): never in Redis.
    ...{ perProcess: true },
  });

  const gate: onRequestAsyncHookHandler = async (request) => {
    const status = await limiter(request, { increment: false });
    if (!status.isAllowed && status.remaining === 0) {
      const retryAfter = Math.max(1, status.ttlInSeconds);
      throw new AppError('rate-limited', {
        retryAfter,
        detail: `Too many failed authentications from this address; retry in ${retryAfter} s.`,
      });
    }
  };
  const count: onSendAsyncHookHandler = async (request, reply) => {
    if (reply.statusCode === 401) await limiter(request);
  };

  app.addHook('onRoute', (route) => {
    if (!authenticates(route)) return;
    // First: a refused address spends nothing on the key check or the body.
    route.onRequest = withFirstHook(route.onRequest, gate);
    route.onSend = withHook(route.onSend, count);
  });
};

/** Routes that can answer 401: bearer keys, the metrics token, webhook signatures. */
function authenticates(route: RouteOptions): boolean {
  const { auth, problems = [] } = route.config ?? {};
  return (
    (auth !== undefined && auth !== 'none') ||
    problems.includes('unauthorized') ||
    problems.includes('webhook-signature-invalid')
  );
}

export default fp(failedAuthLimit, { name: 'failed-auth-limit' });
