import Fastify from 'fastify';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { Logger } from 'pino';
import type { Config } from '../config/config';
import errorHandlerPlugin from '../http/error-handler';
import { metricsRoute } from '../observability/metrics-route';
import failedAuthLimit from '../security/failed-auth-limit';
import { publicRateLimit } from '../security/rate-limits';
import securityHeaders from '../security/security-headers';
import { exporterScrape } from '../temporal/temporal-runtime';
import { serverOptions } from './server-options';

/**
 * The worker's `GET /metrics` on HOST:WORKER_METRICS_PORT: the Temporal SDK's exporter (which
 * has no authentication, so it listens on a loopback port of its own) behind the API's metrics
 * route, so a scrape needs the same METRICS_TOKEN. Per client IP it answers as many requests and
 * wrong tokens as the API (`RATE_LIMIT_PUBLIC_MAX`, `RATE_LIMIT_FAILED_AUTH_MAX`).
 */
export async function buildWorkerMetricsServer(
  config: Config,
  exporterUrl: string,
  log: Logger,
): Promise<FastifyInstance> {
  // Scrapes are not worth a line each; refusals and failures are.
  const level = log.isLevelEnabled('warn') ? 'warn' : log.level;
  const loggerInstance: FastifyBaseLogger = log.child({ part: 'worker-metrics' }, { level });
  const app = Fastify({ ...serverOptions(config, false), loggerInstance });
  await app.register(securityHeaders);
  await app.register(errorHandlerPlugin);
  const limits = config.rateLimits;
  await app.register(rateLimit, publicRateLimit(limits));
  await app.register(failedAuthLimit, { max: limits.failedAuthMax, windowMs: limits.windowMs });
  await app.register(metricsRoute, {
    scrape: exporterScrape(exporterUrl),
    token: config.http.metricsToken,
  });
  return app;
}
