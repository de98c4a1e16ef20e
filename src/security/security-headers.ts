import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import fp from 'fastify-plugin';
import helmet from 'helmet';
import type { HelmetOptions } from 'helmet';
import type { FastifyPluginAsync } from 'fastify';

/**
 * Helmet's headers for a JSON API, the set OWASP's REST Security Cheat Sheet asks of API
 * responses: no response may load anything or be framed, sniffed or fetched cross-origin, and
 * HTTPS is sticky. The headers that only shape how a browser treats a document (opener,
 * referrer, DNS prefetch, origin keying, old IE and Flash switches) are left to the pages.
 */
export const jsonApiHeaders: HelmetOptions = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] },
  },
  xFrameOptions: { action: 'deny' },
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  referrerPolicy: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
};

/**
 * The document headers the pages galang serves (the campaign page, Swagger UI) add to the API's;
 * each page sets its own Content-Security-Policy.
 */
export const documentHeaders: HelmetOptions = {
  contentSecurityPolicy: false,
  crossOriginResourcePolicy: false,
  strictTransportSecurity: false,
  xContentTypeOptions: false,
  xFrameOptions: false,
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
 * Helmet's headers on every response of the plugin's scope, as Fastify reply headers.
 * `@fastify/helmet` runs Helmet's middleware anew on each request; that and its raw `setHeader`
 * calls cost the replay route about half its rate in `bench:idempotency`.
 */
const securityHeaders: FastifyPluginAsync<HelmetOptions> = async (app, options) => {
  const headers = helmetHeaders(options);
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
};

/** On every route of the app. */
export default fp(securityHeaders, { name: 'security-headers' });

/** On the routes of the plugin that registers it (encapsulated): the pages' document headers. */
export const pageSecurityHeaders = securityHeaders;
