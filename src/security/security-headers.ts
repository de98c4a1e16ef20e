import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
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
 * The headers Helmet's middleware sets for these options, recorded once from a stand-in
 * response: with no nonces or per-request directives they are the same for every request.
 */
export function helmetHeaders(options: HelmetOptions): Record<string, string> {
  const request = new IncomingMessage(new Socket());
  const response = new ServerResponse(request);
  helmet(options)(request, response, () => undefined);
  return Object.fromEntries(
    Object.entries(response.getHeaders()).map(([name, value]) => [name, String(value)]),
  );
}

/**
 * Helmet's headers on every response, as Fastify reply headers. `@fastify/helmet` runs Helmet's
 * middleware anew on each request; that and its raw `setHeader` calls cost the replay route
 * about half its rate in `bench:idempotency`.
 */
const securityHeaders: FastifyPluginAsync<HelmetOptions> = async (app, options) => {
  const headers = helmetHeaders(options);
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
};

export default fp(securityHeaders, { name: 'security-headers' });
