import type { FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import { bearerToken, keyDigest } from '../auth/key-authenticator';
import { AppError } from '../errors/error-catalogue';

export interface MetricsRouteOptions {
  registry: Registry;
  /** When set, a scrape must send `Authorization: Bearer <token>` (Prometheus `authorization`). */
  token: string | undefined;
}

/**
 * `GET /metrics`: this API process's Prometheus metrics. Each scrape also reads the
 * reconciliation gauges from Postgres, so with `METRICS_TOKEN` set nobody else can make it do
 * that (or read the numbers); without one, keep the path off the public listener.
 */
export const metricsRoute: FastifyPluginAsync<MetricsRouteOptions> = async (app, options) => {
  const { registry, token } = options;
  // Compared by digest, like the bearer keys: the comparison's timing says nothing of the token.
  const tokenDigest = token === undefined ? undefined : keyDigest(token);
  app.get(
    '/metrics',
    {
      config: {
        auth: 'none',
        duringBoot: true,
        ...(token === undefined ? {} : { problems: ['unauthorized'] }),
      },
      schema: {
        summary: 'Prometheus metrics of this API process (text exposition format)',
        response: { 200: { description: 'text/plain; version=0.0.4', type: 'string' } },
      },
      ...(token !== undefined && {
        onRequest: (request, _reply, done) => {
          const offered = bearerToken(request.headers.authorization);
          done(
            offered !== undefined && keyDigest(offered) === tokenDigest
              ? undefined
              : new AppError('unauthorized', { detail: 'GET /metrics wants the METRICS_TOKEN.' }),
          );
        },
      }),
    },
    async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()),
  );
};
