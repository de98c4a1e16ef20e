import fp from 'fastify-plugin';
import type { FastifyHelmetOptions } from '@fastify/helmet';
import type { FastifyPluginAsync } from 'fastify';

/**
 * The response headers OWASP's REST Security Cheat Sheet asks of a JSON API, with Helmet's
 * values: an answer is never stored by a browser or a shared cache (a donation, a problem), may
 * load nothing and is never framed, sniffed or read cross-origin, and HTTPS is sticky. A route
 * that sets its own keeps it: the public campaign progress is cacheable on purpose, and static
 * files keep @fastify/static's. Fixed, so they are set as plain reply headers: running Helmet
 * per request cost the replay route about half its rate in `bench:idempotency`.
 */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none';frame-ancestors 'none'",
  'cross-origin-resource-policy': 'same-origin',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

const API_HEADER_ENTRIES = Object.entries(API_SECURITY_HEADERS);

/**
 * `@fastify/helmet`'s options for the pages galang serves (the campaign page, Swagger UI): its
 * defaults, never framed, like the API; each page adds its own Content-Security-Policy.
 */
export const PAGE_HELMET_OPTIONS: FastifyHelmetOptions = { xFrameOptions: { action: 'deny' } };

/**
 * The API's headers on every answer, except those its route already set: the pages register
 * `@fastify/helmet` in their own scope, whose headers are set before any `onSend` runs.
 */
const apiSecurityHeaders: FastifyPluginAsync = async (app) => {
  app.addHook('onSend', (_request, reply, payload, done) => {
    for (const [name, value] of API_HEADER_ENTRIES) {
      if (!reply.hasHeader(name)) reply.header(name, value);
    }
    done(null, payload);
  });
};

export default fp(apiSecurityHeaders, { name: 'api-security-headers' });
