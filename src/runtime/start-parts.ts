import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/config';
import { createDatabase } from '../db/database';
import type { Db } from '../db/database';
import { buildApp } from './api-app';
import { IdempotencyStore } from '../idempotency/idempotency-store';
import { createMetrics } from '../observability/metrics';
import { ensureReconciliationSchedule } from '../reconciliation/reconciliation-schedule';
import { ensureReceiptsSchedule } from '../receipts/receipts-schedule';
import { PaymentSimulator } from '../providers/simulator/simulator-server';
import { connectTemporalClient, createTemporalClient } from '../temporal/temporal-client';
import { checkTemporal, probeTemporalTls } from '../temporal/temporal-reachability';
import { installTemporalRuntime } from '../temporal/temporal-runtime';
import { BootState } from '../health/boot-state';
import { bundleWorkflows, createDonationWorker } from './donation-worker';
import { createServices } from './create-services';
import type { Services } from './create-services';
import type { Logger } from 'pino';
import { createProviders } from './open-resources';
import { checkProvidersAtBoot, waitForPostgres, waitForTemporal } from './boot-waits';
import { closeRedis, openRedis } from '../db/redis-connection';
import { loopbackPort } from './loopback-port';
import { buildWorkerMetricsServer } from './worker-metrics-server';

/** A started part of the pipeline and how to stop it. */
export interface Running {
  name: string;
  stop(): Promise<void>;
}

export interface ApiHandle extends Running {
  app: FastifyInstance;
  url: string;
  /**
   * Resolves once the API has booted: Postgres migrated, Temporal reached over the API's own
   * connection. Until then it listens, `/readyz` says `starting` and other routes answer 503.
   * Rejects when boot fails for good (a misconfiguration).
   */
  booted: Promise<void>;
}

/** Opens the edge's LMDB store with the configured TTL and lease. */
export function openIdempotencyStore(config: Config): IdempotencyStore {
  return new IdempotencyStore({
    path: config.lmdbPath,
    claimsPath: config.lmdbClaimsPath,
    ttlSeconds: config.idempotencyTtlSeconds,
    leaseSeconds: config.idempotencyLeaseSeconds,
  });
}

/**
 * The HTTP API with its own pools, Redis, LMDB and Temporal client (its loops run with the
 * app). It listens at once and boots behind its gate: a Postgres or Temporal that is not up yet
 * is waited for, with backoff, rather than exited on.
 */
export async function startApi(config: Config, log: Logger): Promise<ApiHandle> {
  // Its own LMDB store is the one thing the API cannot wait for: opened first, or no boot.
  const idempotencyStore = openIdempotencyStore(config);
  const db = createDatabase({ connectionString: config.databaseUrl, max: 10 });
  const redis = openRedis(config);
  const temporal = createTemporalClient(config.temporal);
  const metrics = createMetrics();
  const webhookDb = createDatabase({
    connectionString: config.databaseUrl,
    max: config.webhookPoolSize,
  });
  const boot = new BootState();
  const providers = createProviders(config);
  const app = await buildApp({
    config,
    db,
    webhookDb,
    redis,
    idempotencyStore,
    temporal,
    metrics,
    providers,
    defaultProvider: config.payments.provider,
    boot,
  });
  const url = await app.listen({ host: config.host, port: config.port });
  const booted = (async () => {
    await waitForPostgres(config, db, log);
    await checkProvidersAtBoot(config, db, providers, log);
    await waitForTemporal(config, log, () => checkTemporal(temporal, config.temporal));
    boot.markReady();
  })();
  // The entry point awaits it; a stop while it still waits must not leave it unobserved.
  booted.catch(() => undefined);
  return {
    name: 'api',
    app,
    url,
    booted,
    async stop() {
      await app.close();
      await temporal.connection.close();
      await webhookDb.destroy();
      await db.destroy();
      await idempotencyStore.close();
      await closeRedis(redis);
    },
  };
}

/**
 * This process's Temporal Runtime: SDK and workflow/activity logs through pino, and, when
 * WORKER_METRICS_PORT is not 0, the SDK's Prometheus exporter on a loopback port, whose URL it
 * resolves with ({@link startWorkerMetrics} serves it). It is process-wide and must be installed
 * before anything creates a NativeConnection, so an entry point that runs a worker calls this
 * first.
 */
export async function installWorkerRuntime(
  config: Config,
  log: Logger,
): Promise<string | undefined> {
  const exporterPort = config.workerMetricsPort > 0 ? await loopbackPort() : undefined;
  installTemporalRuntime({
    log,
    metricsBindAddress: exporterPort === undefined ? undefined : `127.0.0.1:${exporterPort}`,
  });
  return exporterPort === undefined ? undefined : `http://127.0.0.1:${exporterPort}/metrics`;
}

/** The worker's metrics endpoint on HOST:WORKER_METRICS_PORT, wanting the METRICS_TOKEN. */
export async function startWorkerMetrics(
  config: Config,
  exporterUrl: string,
  log: Logger,
): Promise<Running & { url: string }> {
  const app = await buildWorkerMetricsServer(config, exporterUrl, log);
  const url = await app.listen({ host: config.host, port: config.workerMetricsPort });
  return { name: 'worker-metrics', url, stop: () => app.close() };
}

/**
 * The worker of the task queues WORKER_TASK_QUEUES names (the donations', with refunds, pledges
 * and reconciliation, and the receipts'); resolves once it polls them. It makes sure the
 * schedules of reconciliation and receipts exist (RECONCILE_INTERVAL_SECONDS,
 * RECEIPTS_INTERVAL_SECONDS). A Temporal that is not up yet, or a namespace not created yet, is
 * waited for with backoff, not exited on.
 */
export async function startWorker(config: Config, db: Db, log: Logger): Promise<Running> {
  const redis = openRedis(config);
  const providers = createProviders(config);
  const workflowBundle = await bundleWorkflows();
  let services: Services | undefined;
  const { temporal, worker, connection } = await waitForTemporal(config, log, async () => {
    await probeTemporalTls(config.temporal);
    // Reconciliation starts and describes workflows: a client of its own beside the worker's.
    const client = await connectTemporalClient(config.temporal);
    try {
      services = createServices(config, { db, redis, temporal: client, providers });
      const created = await createDonationWorker({
        temporal: config.temporal,
        taskQueue: config.temporal.taskQueue,
        services,
        providers,
        config,
        tuning: config.worker,
        queues: config.worker.taskQueues,
        workflowBundle,
      });
      try {
        await ensureReconciliationSchedule(client, {
          taskQueue: config.temporal.taskQueue,
          intervalSeconds: config.reconciliation.intervalSeconds,
        });
        await ensureReceiptsSchedule(client, {
          prefix: config.mail.organization.receiptPrefix,
          taskQueue: config.temporal.taskQueue,
          intervalSeconds: config.mail.receiptsIntervalSeconds,
        });
      } catch (error) {
        await created.connection.close().catch(() => undefined);
        throw error;
      }
      return { temporal: client, ...created };
    } catch (error) {
      await client.connection.close().catch(() => undefined);
      throw error;
    }
  });
  const running = worker.run();
  return {
    name: 'worker',
    async stop() {
      worker.shutdown();
      await running;
      services?.mailSender.close();
      await connection.close();
      await temporal.connection.close();
      await closeRedis(redis);
    },
  };
}

export async function startSimulator(config: Config): Promise<Running & { url: string }> {
  const simulator = new PaymentSimulator({
    webhookUrl: config.simulator.webhookUrl,
    webhookSecret: config.simulator.webhookSecret,
    autoPayMs: config.simulator.autoPayMs,
  });
  const url = await simulator.listen(config.simulator.port, config.host);
  return { name: 'simulator', url, stop: () => simulator.close() };
}

/** Stops parts in reverse start order; one failing to stop does not keep the others up. */
export async function stopAll(parts: readonly Running[]): Promise<void> {
  for (const part of [...parts].reverse()) {
    await part.stop().catch(() => undefined);
  }
}
