import fp from 'fastify-plugin';
import type { FastifyPluginAsync, onResponseHookHandler } from 'fastify';
import type { Histogram } from 'prom-client';
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
  // One labelled child per (method, route, status), found by a string key: prom-client would
  // otherwise hash the label object on every observation, a measurable cost on cached reads.
  const series = new Map<string, Histogram.Internal<'method' | 'route' | 'status_code'>>();
  const onResponse: onResponseHookHandler = (request, reply, done) => {
    const route = request.routeOptions.url ?? UNMATCHED;
    const key = `${request.method} ${reply.statusCode} ${route}`;
    let child = series.get(key);
    if (!child) {
      child = requestDuration.labels({
        method: request.method,
        route,
        status_code: reply.statusCode,
      });
      series.set(key, child);
    }
    child.observe(reply.elapsedTime / 1000);
    done();
  };
  app.addHook('onResponse', onResponse);
};

export default fp(httpMetricsPlugin, { name: 'http-metrics' });
