import type { FastifyInstance } from 'fastify';
import type { Config } from '../config/config';
import { createDatabase } from '../db/database';
import type { Db } from '../db/database';
import { buildApp } from './api-app';
import { IdempotencyStore } from '../idempotency/idempotency-store';
import { createMetrics } from '../observability/metrics';
import { ensureReconciliationSchedule } from '../reconciliation/reconciliation-schedule';
import { PaymentSimulator } from '../providers/simulator/simulator-server';
import { connectTemporalClient, createTemporalClient } from '../temporal/temporal-client';
import { installTemporalRuntime } from '../temporal/temporal-runtime';
import { createDonationWorker } from './donation-worker';
import { createServices } from './create-services';
import type { Logger } from 'pino';
import { createProviders } from './open-resources';
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

/** The HTTP API with its own Redis, LMDB and Temporal client (its loops run with the app). */
export async function startApi(config: Config, db: Db): Promise<ApiHandle> {
  const redis = openRedis(config);
  const idempotencyStore = openIdempotencyStore(config);
  const temporal = createTemporalClient(config.temporal);
  const metrics = createMetrics();
  const webhookDb = createDatabase({
    connectionString: config.databaseUrl,
    max: config.webhookPoolSize,
  });
  const app = await buildApp({
    config,
    db,
    webhookDb,
    redis,
    idempotencyStore,
    temporal,
    metrics,
    providers: createProviders(config),
    defaultProvider: config.payments.provider,
  });
  const url = await app.listen({ host: config.host, port: config.port });
  return {
    name: 'api',
    app,
    url,
    async stop() {
      await app.close();
      await temporal.connection.close();
      await webhookDb.destroy();
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
 * The donation worker; resolves once it polls its task queue. It also runs reconciliation, and
 * makes sure the schedule that starts it exists (RECONCILE_INTERVAL_SECONDS).
 */
export async function startWorker(config: Config, db: Db): Promise<Running> {
  const redis = openRedis(config);
  const providers = createProviders(config);
  // Reconciliation starts and describes workflows: a client of its own beside the worker's.
  const temporal = await connectTemporalClient(config.temporal);
  const { worker, connection } = await createDonationWorker({
    temporal: config.temporal,
    taskQueue: config.temporal.taskQueue,
    services: createServices(config, { db, redis, temporal, providers }),
    providers,
    config,
    tuning: config.worker,
  });
  await ensureReconciliationSchedule(temporal, {
    taskQueue: config.temporal.taskQueue,
    intervalSeconds: config.reconciliation.intervalSeconds,
  });
  const running = worker.run();
  return {
    name: 'worker',
    async stop() {
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running;
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
