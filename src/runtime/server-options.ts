import type { FastifyHttpOptions, FastifyServerOptions } from 'fastify';
import type { Server } from 'node:http';
import type { Config } from '../config/config';
import { logRedaction, logRequest } from '../observability/log-redaction';
import { loggerOptions } from '../observability/logger-options';

/**
 * The HTTP server's edges. Fastify leaves its request and connection timeouts off, so a client
 * that trickles its body would hold a socket forever. Node checks for overdue requests every
 * `connectionsCheckingInterval` (30 s by default): here often enough that a slow client is cut
 * close to its deadline.
 */
export function serverOptions(
  config: Config,
  logger: FastifyServerOptions['logger'] | undefined,
): FastifyHttpOptions<Server> {
  const { http } = config;
  const given = logger ?? loggerOptions(config);
  return {
    logger:
      typeof given === 'object'
        ? { redact: logRedaction, serializers: { req: logRequest }, ...given }
        : given,
    requestTimeout: http.requestTimeoutMs,
    connectionTimeout: http.connectionTimeoutMs,
    keepAliveTimeout: http.keepAliveTimeoutMs,
    trustProxy: typeof http.trustProxy === 'boolean' ? http.trustProxy : [...http.trustProxy],
    // Given to Node's constructor too: Node 20 ignores a request timeout set afterwards, which
    // is what Fastify's own option does.
    http: {
      requestTimeout: http.requestTimeoutMs,
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, http.requestTimeoutMs / 4)),
    },
  };
}
