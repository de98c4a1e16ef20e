import net from 'node:net';
import Fastify from 'fastify';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import type { Logger } from 'pino';
import type { Config } from '../config/config';
import { AppError } from '../errors/error-catalogue';
import errorHandlerPlugin from '../http/error-handler';
import { metricsRoute } from '../observability/metrics-route';
import securityHeaders from '../security/security-headers';
import { exporterScrape } from '../temporal/temporal-runtime';
import { serverOptions } from './server-options';

/**
 * The worker's `GET /metrics` on HOST:WORKER_METRICS_PORT: the Temporal SDK's exporter (which
 * has no authentication, so it listens on a loopback port of its own) behind the API's metrics
 * route, so a scrape needs the same METRICS_TOKEN. Per client IP it answers as many requests as
 * a public read of the API (`RATE_LIMIT_PUBLIC_MAX`), counted in this process.
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
  const { windowMs, publicMax } = config.rateLimits;
  await app.register(rateLimit, {
    max: publicMax,
    timeWindow: windowMs,
    enableDraftSpec: true,
    errorResponseBuilder: (_request, context) =>
      new AppError('rate-limited', { retryAfter: Math.max(1, Math.ceil(context.ttl / 1000)) }),
  });
  await app.register(metricsRoute, {
    scrape: exporterScrape(exporterUrl),
    token: config.http.metricsToken,
  });
  return app;
}

/** A loopback port nothing listens on right now, for the SDK's exporter (chosen by the kernel). */
export function loopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => {
        resolve(port);
      });
    });
  });
}
