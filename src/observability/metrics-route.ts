import type { FastifyPluginAsync } from 'fastify';
import type { Registry } from 'prom-client';
import { bearerToken, keyDigest } from '../auth/key-authenticator';
import { AppError } from '../errors/error-catalogue';

/** One scrape's answer: the exposition text and its content type. */
export interface MetricsText {
  readonly contentType: string;
  readonly body: string;
}

export interface MetricsRouteOptions {
  /** Reads this process's metrics, once per scrape. */
  scrape: () => Promise<MetricsText>;
  /**
   * When set (always in production), a scrape must send `Authorization: Bearer <token>`
   * (Prometheus `authorization`).
   */
  token: string | undefined;
}

/** A prom-client registry's metrics (the API's; its reconciliation gauges read Postgres). */
export function registryScrape(registry: Registry): () => Promise<MetricsText> {
  return async () => ({ contentType: registry.contentType, body: await registry.metrics() });
}

/**
 * `GET /metrics`: this process's Prometheus metrics. A scrape of the API also reads the
 * reconciliation gauges from Postgres, so with `METRICS_TOKEN` set nobody else can make it do
 * that (or read the numbers); production refuses to start without one.
 */
export const metricsRoute: FastifyPluginAsync<MetricsRouteOptions> = async (app, options) => {
  const { scrape, token } = options;
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
        summary: 'Prometheus metrics of this process (text exposition format)',
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
    async (_request, reply) => {
      const { contentType, body } = await scrape();
      return reply.type(contentType).send(body);
    },
  );
};
