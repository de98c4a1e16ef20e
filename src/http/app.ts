import Fastify from 'fastify';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Client } from '@temporalio/client';
import type { Redis } from 'ioredis';
import type { Config } from '../config/config';
import { usesDevPayloadKey } from '../config/temporal-config';
import type { Db } from '../db/database';
import authPlugin from '../auth/auth-plugin';
import idempotencyPlugin from '../idempotency/idempotency-plugin';
import type { IdempotencyStore } from '../idempotency/idempotency-store';
import type { ProviderRegistry } from '../providers/payment-provider';
import { CampaignRepository } from '../campaigns/campaign-repository';
import { ProgressCache } from '../campaigns/progress-cache';
import { ProgressService } from '../campaigns/progress-service';
import { campaignRoutes } from '../campaigns/campaign-routes';
import { CampaignService } from '../campaigns/campaign-service';
import { DonationRepository } from '../donations/donation-repository';
import { DonationService } from '../donations/donation-service';
import { donationRoutes } from '../donations/donation-routes';
import { WebhookInboxRepository } from '../webhooks/webhook-inbox-repository';
import { MoneyWorkflows } from '../temporal/money-workflows';
import { WebhookDelivery } from '../webhooks/webhook-delivery';
import { WebhookIntake } from '../webhooks/webhook-intake';
import { webhookRoutes } from '../webhooks/webhook-routes';
import type { Metrics } from '../observability/metrics';
import { registerReconciliationMetrics } from '../observability/metrics';
import { ReconciliationRepository } from '../reconciliation/reconciliation-repository';
import httpMetricsPlugin from '../observability/http-metrics-plugin';
import { metricsRoute } from '../observability/metrics-route';
import rateLimitsPlugin from '../security/rate-limits';
import securityHeaders from '../security/security-headers';
import { codecRoutes } from '../temporal/codec-routes';
import { healthRoutes } from '../health/health-routes';
import demoPagePlugin from '../demo-page/demo-page-plugin';
import { apiBackgroundLoops, runBackgroundLoops } from '../runtime/background-loops';
import drainOnClosePlugin from './drain-on-close';
import errorHandlerPlugin from './error-handler';
import openapiPlugin from './openapi-plugin';
import requestIdPlugin from './request-id';
import { serverOptions } from './server-options';

/** Everything the API needs from outside; the entry points and the tests build these. */
export interface AppDependencies {
  config: Config;
  db: Db;
  /** The webhook intake's own small pool, so public reads cannot starve it; else `db`. */
  webhookDb?: Db;
  redis: Redis;
  idempotencyStore: IdempotencyStore;
  temporal: Client;
  providers: ProviderRegistry;
  metrics: Metrics;
  /** The provider new donations use. */
  defaultProvider: string;
  logger?: FastifyServerOptions['logger'];
}

/** The composition root of the HTTP API: repositories, services, plugins and routes. */
export async function buildApp(deps: AppDependencies): Promise<FastifyInstance> {
  const app = Fastify({
    ...serverOptions(deps.config, deps.logger),
    bodyLimit: 64 * 1024,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  await app.register(requestIdPlugin);
  await app.register(drainOnClosePlugin);
  await app.register(securityHeaders);

  const campaigns = new CampaignRepository(deps.db);
  const donations = new DonationRepository(deps.db);
  const progress = new ProgressService({
    campaigns,
    cache: new ProgressCache(deps.redis, deps.config.progress),
    metrics: deps.metrics.progress,
    log: app.log,
    localTtlMs: deps.config.progress.localTtlMs,
    ttlSeconds: deps.config.progress.ttlSeconds,
  });
  app.addHook('onClose', () => progress.close());
  const webhookDb = deps.webhookDb ?? deps.db;
  const inbox = new WebhookInboxRepository(webhookDb);

  await app.register(errorHandlerPlugin);
  deps.metrics.lmdb.watch(deps.idempotencyStore);
  // Before auth and every route: it collects the routes registered after it, and its own
  // /docs routes are public.
  if (deps.config.http.docsEnabled) {
    await app.register(openapiPlugin, { publicUrl: deps.config.publicUrl });
  }
  await app.register(authPlugin, {
    apiKeys: deps.config.apiKeys,
    operatorKeys: deps.config.operatorKeys,
  });
  await app.register(rateLimitsPlugin, { limits: deps.config.rateLimits, redis: deps.redis });
  await app.register(idempotencyPlugin, {
    store: deps.idempotencyStore,
    metrics: deps.metrics.idempotency,
  });
  // After the plugins that add per-route hooks: its own `onSend` comes last on each route, so a
  // request's latency includes storing its idempotent answer.
  await app.register(httpMetricsPlugin, { metrics: deps.metrics.http });

  await app.register(healthRoutes, {
    db: deps.db,
    redis: deps.redis,
    temporal: deps.temporal,
    store: deps.idempotencyStore,
  });
  const reconciliation = new ReconciliationRepository(deps.db);
  registerReconciliationMetrics(deps.metrics.registry, () => reconciliation.stats());
  await app.register(metricsRoute, {
    registry: deps.metrics.registry,
    token: deps.config.http.metricsToken,
  });
  await app.register(codecRoutes, {
    prefix: '/v1/codec',
    keys: deps.config.temporal.payloadKeys,
    uiOrigins: deps.config.temporal.uiOrigins,
    open: deps.config.env !== 'production' && usesDevPayloadKey(deps.config.temporal.payloadKeys),
  });
  const moneyWorkflows = new MoneyWorkflows(deps.temporal, deps.config.temporal.taskQueue);
  await app.register(donationRoutes, {
    service: new DonationService({
      temporal: deps.temporal,
      campaigns,
      donations,
      providers: deps.providers,
      moneyWorkflows,
      taskQueue: deps.config.temporal.taskQueue,
      provider: deps.defaultProvider,
      verifyWithProvider: deps.providers.get(deps.defaultProvider)?.verifyWithProvider ?? false,
      paymentTimeoutSeconds: deps.config.paymentTimeoutSeconds,
      settleHorizonSeconds: deps.config.settleHorizonSeconds,
      temporalTimeoutMs: deps.config.temporal.requestTimeoutMs,
      earlyReturn: deps.config.earlyReturn,
      metrics: deps.metrics.donations,
    }),
  });
  await app.register(campaignRoutes, { progress, campaigns: new CampaignService(campaigns) });
  if (deps.config.demoPage) {
    await app.register(demoPagePlugin, {
      config: deps.config,
      campaigns,
      donations,
      simulatePayments: deps.config.env !== 'production' && deps.defaultProvider === 'simulator',
    });
  }
  const intake = new WebhookIntake({
    providers: deps.providers,
    inbox,
    delivery: new WebhookDelivery({
      inbox,
      donations: new DonationRepository(webhookDb),
      providers: deps.providers,
      temporal: deps.temporal,
      moneyWorkflows,
      metrics: deps.metrics.webhooks,
    }),
    metrics: deps.metrics.webhooks,
    redeliveryMaxAgeMs:
      deps.config.reconciliation.intervalSeconds === 0
        ? undefined
        : deps.config.reconciliation.graceSeconds * 1000,
  });
  await app.register(webhookRoutes, { intake });
  runBackgroundLoops(
    app,
    apiBackgroundLoops({
      store: deps.idempotencyStore,
      metrics: deps.metrics.idempotency,
      intake,
      redeliveryIntervalMs: deps.config.inboxRedeliveryIntervalMs,
    }),
  );
  return app;
}
