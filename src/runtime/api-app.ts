import Fastify from 'fastify';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from '../config/config';
import { usesDevPayloadKey } from '../config/temporal-config';
import auditPlugin from '../audit/audit-plugin';
import authPlugin from '../auth/auth-plugin';
import idempotencyPlugin from '../idempotency/idempotency-plugin';
import type { IdempotencyStore } from '../idempotency/idempotency-store';
import { ProgressService } from '../campaigns/progress-service';
import { campaignRoutes } from '../campaigns/campaign-routes';
import { CampaignService } from '../campaigns/campaign-service';
import { donorWallRoutes } from '../campaigns/donor-wall-routes';
import { erasureRoutes } from '../privacy/erasure-routes';
import { pledgeRoutes } from '../pledges/pledge-routes';
import { DonorWallService } from '../campaigns/donor-wall-service';
import { donationRoutes } from '../donations/donation-routes';
import { receiptRoutes } from '../receipts/receipt-routes';
import { webhookRoutes } from '../webhooks/webhook-routes';
import type { Metrics } from '../observability/metrics';
import { registerReconciliationMetrics } from '../observability/metrics';
import httpMetricsPlugin from '../observability/http-metrics-plugin';
import { metricsRoute, registryScrape } from '../observability/metrics-route';
import rateLimitsPlugin from '../security/rate-limits';
import securityHeaders from '../security/security-headers';
import { codecRoutes } from '../temporal/codec-routes';
import { healthRoutes } from '../health/health-routes';
import { BootState } from '../health/boot-state';
import bootGate from '../http/boot-gate';
import demoPagePlugin from '../demo-page/demo-page-plugin';
import { apiBackgroundLoops, runBackgroundLoops } from './background-loops';
import { createServices } from './create-services';
import type { Resources } from './create-services';
import drainOnClosePlugin from '../http/drain-on-close';
import errorHandlerPlugin from '../http/error-handler';
import openapiPlugin from '../http/openapi-plugin';
import requestIdPlugin from '../http/request-id';
import { serverOptions } from './server-options';
import { registerPledgeMetrics } from '../observability/pledge-metrics';

/** Everything the API needs from outside; the entry points and the tests build these. */
export interface AppDependencies extends Resources {
  config: Config;
  idempotencyStore: IdempotencyStore;
  metrics: Metrics;
  logger?: FastifyServerOptions['logger'];
  /** Boot's progress (src/runtime/start-parts.ts); absent: booted already (tests). */
  boot?: BootState;
}

/** The HTTP API: the services from {@link createServices}, with the plugins and the routes. */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const app = Fastify({
    ...serverOptions(deps.config, deps.logger),
    bodyLimit: 64 * 1024,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const boot = deps.boot ?? new BootState(true);
  await app.register(requestIdPlugin);
  await app.register(drainOnClosePlugin);
  await app.register(securityHeaders);
  // Before every route: while booting only health, readiness and metrics answer.
  await app.register(bootGate, { isReady: () => boot.ready });

  const services = createServices(deps.config, deps);
  const { campaigns, donations, intake } = services;
  const progress = new ProgressService({
    campaigns,
    cache: services.progressCache,
    metrics: deps.metrics.progress,
    log: app.log,
    localTtlMs: deps.config.progress.localTtlMs,
    ttlSeconds: deps.config.progress.ttlSeconds,
  });
  app.addHook('onClose', async () => {
    services.mailSender.close();
    await progress.close();
  });

  await app.register(errorHandlerPlugin);
  deps.metrics.lmdb.watch(deps.idempotencyStore);
  // Before auth and every route: it collects the routes registered after it, and its own
  // /docs routes are public.
  if (deps.config.http.docsEnabled) {
    await app.register(openapiPlugin, {
      publicUrl: deps.config.publicUrl,
      limits: deps.config.rateLimits,
    });
  }
  await app.register(authPlugin, {
    apiKeys: deps.config.apiKeys,
    operatorKeys: deps.config.operatorKeys,
    codecKeys: deps.config.codec.keys,
  });
  await app.register(rateLimitsPlugin, { limits: deps.config.rateLimits, redis: deps.redis });
  await app.register(idempotencyPlugin, {
    store: deps.idempotencyStore,
    metrics: deps.metrics.idempotency,
  });
  // After the key check, the rate limit and the idempotency claim: an action refused by any of
  // them, or answered from a stored answer, was never done and is not recorded.
  await app.register(auditPlugin, { audit: services.audit });
  // After the plugins that add per-route hooks: its own `onSend` comes last on each route, so a
  // request's latency includes storing its idempotent answer.
  await app.register(httpMetricsPlugin, { metrics: deps.metrics.http });

  await app.register(healthRoutes, {
    db: deps.webhookDb ?? deps.db,
    booted: () => boot.ready,
    redis: deps.redis,
    temporal: deps.temporal,
    store: deps.idempotencyStore,
  });
  registerReconciliationMetrics(deps.metrics.registry, () => services.reconciliation.stats());
  registerPledgeMetrics(deps.metrics.registry, () => services.pledgeRepository.counts());
  await app.register(metricsRoute, {
    scrape: registryScrape(deps.metrics.registry),
    token: deps.config.http.metricsToken,
  });
  if (deps.config.codec.enabled) {
    await app.register(codecRoutes, {
      prefix: '/v1/codec',
      keys: deps.config.temporal.payloadKeys,
      uiOrigins: deps.config.temporal.uiOrigins,
      open: deps.config.env !== 'production' && usesDevPayloadKey(deps.config.temporal.payloadKeys),
    });
  }
  await app.register(donationRoutes, {
    service: services.donationService,
    reads: services.donationReads,
  });
  await app.register(receiptRoutes, { receipts: services.receiptService });
  await app.register(erasureRoutes, { erasure: services.erasure });
  await app.register(pledgeRoutes, { pledges: services.pledges });
  await app.register(campaignRoutes, { progress, campaigns: new CampaignService(campaigns) });
  await app.register(donorWallRoutes, {
    wall: new DonorWallService({
      repository: services.wall,
      cache: services.wallCache,
      log: app.log,
    }),
  });
  if (deps.config.demoPage) {
    await app.register(demoPagePlugin, {
      config: deps.config,
      campaigns,
      donations,
      simulatePayments:
        deps.config.env !== 'production' &&
        (deps.defaultProvider ?? deps.config.payments.provider) === 'simulator',
    });
  }
  await app.register(webhookRoutes, {
    intake,
    bodyLimits: deps.config.webhooks.bodyLimits,
    maxInFlight: deps.config.webhooks.maxInFlight,
  });
  runBackgroundLoops(
    app,
    () => boot.ready,
    apiBackgroundLoops({
      store: deps.idempotencyStore,
      metrics: deps.metrics.idempotency,
      intake,
      redeliveryIntervalMs: deps.config.inboxRedeliveryIntervalMs,
    }),
  );
  return app;
}
