import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import fp from 'fastify-plugin';
import type { FastifyPluginAsync } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** `performance.now()` when the request reached its route: the start of its latency. */
    receivedAt: number;
  }
}

const ACCEPTABLE = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Request ids for one process: a random prefix drawn once, then a counter. As unique as a
 * UUID for finding a request in the logs, without drawing random bytes on every request.
 */
export function createRequestIds(): (request: IncomingMessage) => string {
  const prefix = randomBytes(8).toString('hex');
  let next = 0;
  return (request) => {
    const offered = request.headers['x-request-id'];
    if (typeof offered === 'string' && ACCEPTABLE.test(offered)) return offered;
    next++;
    return `${prefix}-${next.toString(36)}`;
  };
}

/**
 * The correlation id of a request: the caller's `X-Request-Id` when it is a sane token, a new
 * id otherwise. It is echoed back, logged with every line, and carried into the workflow. The
 * same hook notes when the request arrived, for the latency metrics.
 */
const requestIdPlugin: FastifyPluginAsync = async (app) => {
  app.setGenReqId(createRequestIds());
  app.decorateRequest('receivedAt', 0);
  app.addHook('onRequest', (request, reply, done) => {
    request.receivedAt = performance.now();
    reply.header('x-request-id', request.id);
    done();
  });
};

export default fp(requestIdPlugin, { name: 'request-id' });
