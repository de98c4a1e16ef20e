import fp from 'fastify-plugin';
import type { FastifyPluginAsync, onResponseHookHandler } from 'fastify';
import type { HttpMetrics } from './metrics';

export interface HttpMetricsPluginOptions {
  metrics: HttpMetrics;
}

/** Requests no route matched share one label, so scanners cannot blow up the series count. */
const UNMATCHED = 'unmatched';

/**
 * Rate and latency per route in one `onResponse` hook: the route label is the registered
 * pattern (`/v1/donations/:id`), never the raw URL, and the latency is Fastify's own
 * `reply.elapsedTime`, so the hook adds one histogram observation and no timers of its own.
 * Callback style, like the idempotency hooks: an async hook would cost a promise per request.
 */
const httpMetricsPlugin: FastifyPluginAsync<HttpMetricsPluginOptions> = async (app, options) => {
  const { requestDuration } = options.metrics;
  const onResponse: onResponseHookHandler = (request, reply, done) => {
    requestDuration.observe(
      {
        method: request.method,
        route: request.routeOptions.url ?? UNMATCHED,
        status_code: reply.statusCode,
      },
      reply.elapsedTime / 1000,
    );
    done();
  };
  app.addHook('onResponse', onResponse);
};

export default fp(httpMetricsPlugin, { name: 'http-metrics' });
