import fp from 'fastify-plugin';
import helmet from 'helmet';
import type { HelmetOptions } from 'helmet';
import type { FastifyPluginAsync } from 'fastify';

/**
 * Helmet's headers for a JSON API: no response may load anything or be framed. The pages galang
 * serves (Swagger UI at /docs, the demo page) set their own Content-Security-Policy on their
 * responses, which replaces this one.
 */
export const jsonApiHeaders: HelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
  },
};

/**
 * Helmet's middleware, built once and run on every request. `@fastify/helmet` rebuilds it on
 * each request (two async hooks and a parse of the policy), which cost the replay route half its
 * rate in `bench:idempotency`.
 */
const securityHeaders: FastifyPluginAsync<HelmetOptions> = async (app, options) => {
  const setHeaders = helmet(options);
  app.addHook('onRequest', (request, reply, done) => {
    // Helmet 8 throws rather than passing an error on, so its callback only ever continues.
    setHeaders(request.raw, reply.raw, () => {
      done();
    });
  });
};

export default fp(securityHeaders, { name: 'security-headers' });
