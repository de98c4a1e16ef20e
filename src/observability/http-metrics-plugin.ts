import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import type { Histogram } from 'prom-client';
import type { HttpMetrics } from './metrics';
import { withHook } from '../http/route-hooks';

export interface HttpMetricsPluginOptions {
  metrics: HttpMetrics;
}

/** Requests no route matched share one label, so scanners cannot blow up the series count. */
const UNMATCHED = 'unmatched';

/**
 * Rate and latency per route, recorded when the answer is handed to the socket (`onSend`):
 * every answer here is a small serialized body written in one go, so the request is done then.
 *
 * The route label is the registered pattern (`/v1/donations/:id`), never the raw URL: each route
 * gets its own hook at registration, and each keeps prom-client's bound child per status code.
 */
const httpMetricsPlugin: FastifyPluginAsync<HttpMetricsPluginOptions> = async (app, options) => {
  const { requestDuration } = options.metrics;

  const recorder = (method: string, route: string) => {
    const byStatus = new Map<number, Histogram.Internal<'method' | 'route' | 'status_code'>>();
    return (request: FastifyRequest, reply: FastifyReply): void => {
      const status = reply.statusCode;
      let series = byStatus.get(status);
      if (!series) {
        series = requestDuration.labels({ method, route, status_code: status });
        byStatus.set(status, series);
      }
      series.observe((performance.now() - request.receivedAt) / 1000);
    };
  };

  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const record = new Map(methods.map((method) => [method, recorder(method, route.url)]));
    const onSend: onSendHookHandler = (request, reply, payload, done) => {
      record.get(request.method)?.(request, reply);
      done(null, payload);
    };
    route.onSend = withHook(route.onSend, onSend);
  });

  // Requests that matched no route run no route hooks: they are counted here.
  const unmatched = new Map<string, ReturnType<typeof recorder>>();
  app.addHook('onSend', (request, reply, payload, done) => {
    if (request.is404) {
      let record = unmatched.get(request.method);
      if (!record) {
        record = recorder(request.method, UNMATCHED);
        unmatched.set(request.method, record);
      }
      record(request, reply);
    }
    done(null, payload);
  });
};

export default fp(httpMetricsPlugin, { name: 'http-metrics', dependencies: ['request-id'] });
