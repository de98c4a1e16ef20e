import { bundleWorkflowCode, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import type { Logger, WorkerOptions } from '@temporalio/worker';
import {
  createDonationActivities,
  createPledgeActivities,
  createReceiptActivities,
  createReconciliationActivities,
  createReversalActivities,
} from '../../activities';
import type { Config } from '../config/config';
import type { ProviderRegistry } from '../providers/payment-provider';
import { permanentFailureInterceptor } from '../temporal/permanent-failure-interceptor';
import { activityMetricsInterceptor } from '../temporal/activity-metrics-interceptor';
import { correlationActivityInterceptor } from '../temporal/correlation-interceptor';
import { createDataConverter } from '../temporal/payload-codec';
import { connectionOptions } from '../temporal/temporal-connection';
import type { TemporalConnectionConfig } from '../temporal/temporal-connection';
import { createWorkerMetrics } from '../temporal/worker-metrics';
import type { ActivityDeps, ReconciliationActivityDeps } from '../../activities';
import { WORKER_QUEUES } from '../config/worker-config';
import type { WorkerQueue, WorkerTuning } from '../config/worker-config';
import { receiptsTaskQueue } from '../receipts/receipt-workflows';
import type { Services } from './create-services';

export interface DonationWorkerOptions {
  /** Address, namespace, TLS, API key and payload keys: the same as the clients'. */
  temporal: TemporalConnectionConfig;
  taskQueue: string;
  /** The graph from createServices, on the worker's own client: activities start workflows. */
  services: Services;
  providers: ProviderRegistry;
  config: Pick<Config, 'latePaymentPolicy' | 'mail' | 'outageRetryAttempts'>;
  /** A prebuilt bundle (tests share one); otherwise the worker bundles `workflows/` itself. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Slots, pollers and cache (WORKER_* settings); the SDK's defaults where absent. */
  tuning?: WorkerTuning;
  /** The task queues to poll (WORKER_TASK_QUEUES); both where absent. */
  queues?: readonly WorkerQueue[];
}

/** The workers of one process, on one connection: run and stopped together. */
export interface DonationWorkers {
  /** Resolves when every worker has stopped; rejects, after stopping the others, if one failed. */
  run(): Promise<void>;
  shutdown(): void;
}

/** The SDK's options for {@link WorkerTuning}; see docs/operations.md for how they were sized. */
export function tuningOptions(tuning: WorkerTuning | undefined): Partial<WorkerOptions> {
  if (!tuning) return {};
  return {
    maxCachedWorkflows: tuning.maxCachedWorkflows,
    maxConcurrentWorkflowTaskExecutions: tuning.maxConcurrentWorkflowTasks,
    maxConcurrentActivityTaskExecutions: tuning.maxConcurrentActivities,
    maxConcurrentLocalActivityExecutions: tuning.maxConcurrentLocalActivities,
    workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: tuning.workflowPollers },
    activityTaskPollerBehavior: { type: 'simple-maximum', maximum: tuning.activityPollers },
  };
}

export const workflowsPath = require.resolve('../../workflows');

/** Webpack's build report is noise at start-up; its warnings and errors still show. */
const bundlerLogger: Logger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: (message, meta) => {
    process.stderr.write(`[workflow bundle] ${message} ${JSON.stringify(meta ?? {})}\n`);
  },
  error: (message, meta) => {
    process.stderr.write(`[workflow bundle] ${message} ${JSON.stringify(meta ?? {})}\n`);
  },
};

/** Bundles `workflows/` for the sandbox once; the result can be shared by several workers. */
export async function bundleWorkflows(): Promise<{ code: string }> {
  return bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules: [require.resolve('../../workflows/interceptors')],
    logger: bundlerLogger,
  });
}

/**
 * Builds the workers of the task queues given (donations, refunds, pledges and reconciliation
 * on the donations' queue; receipts on theirs) from their dependencies, on one connection.
 */
export async function createDonationWorker(
  options: DonationWorkerOptions,
): Promise<{ worker: DonationWorkers; connection: NativeConnection }> {
  const workflowBundle = options.workflowBundle ?? (await bundleWorkflows());
  const connection = await NativeConnection.connect(connectionOptions(options.temporal));
  try {
    const workers = await createWorkersOn(connection, workflowBundle, options);
    return { worker: runTogether(workers), connection };
  } catch (error) {
    // Worker.create checks the namespace: a boot that waits for it tries again on a new one.
    await connection.close().catch(() => undefined);
    throw error;
  }
}

async function createWorkersOn(
  connection: NativeConnection,
  workflowBundle: NonNullable<WorkerOptions['workflowBundle']>,
  options: DonationWorkerOptions,
): Promise<Worker[]> {
  // The Runtime's meter: exported by its Prometheus endpoint when one is configured, else a no-op.
  const metrics = createWorkerMetrics(Runtime.instance().metricMeter);
  const { services } = options;
  const deps: ActivityDeps = {
    donations: services.donations,
    ledger: services.ledger,
    campaigns: services.campaigns,
    providers: options.providers,
    progressCache: services.progressCache,
    wallCache: services.wallCache,
    followUps: services.followUps,
    latePaymentPolicy: options.config.latePaymentPolicy,
    metrics,
  };
  const reconciliation: ReconciliationActivityDeps = {
    reconciler: services.reconciler,
    keptMethods: services.keptMethods,
  };
  const { mail } = options.config;
  const activities: Record<WorkerQueue, () => object> = {
    donations: () => ({
      ...createDonationActivities(deps),
      ...createReversalActivities(deps),
      ...createReconciliationActivities(reconciliation),
      ...createPledgeActivities({ pledges: services.pledges, billing: services.pledgeBilling }),
    }),
    receipts: () =>
      createReceiptActivities({
        receipts: services.receipts,
        mailDeliveries: services.mailDeliveries,
        issuer: { prefix: mail.organization.receiptPrefix, timeZone: mail.organization.timeZone },
        receiptWorkflows: services.receiptWorkflows,
        sender: services.receiptMailer,
        metrics,
      }),
  };
  const taskQueues: Record<WorkerQueue, string> = {
    donations: options.taskQueue,
    receipts: receiptsTaskQueue(options.taskQueue),
  };
  // Outside the sandbox: workflow code sees plain values, histories hold ciphertext.
  const dataConverter = createDataConverter(options.temporal.payloadKeys);
  const activityInterceptors = [
    correlationActivityInterceptor,
    activityMetricsInterceptor(metrics),
    permanentFailureInterceptor(options.config.outageRetryAttempts),
  ];
  const workers: Worker[] = [];
  for (const queue of options.queues ?? WORKER_QUEUES) {
    workers.push(
      await Worker.create({
        connection,
        namespace: options.temporal.namespace,
        taskQueue: taskQueues[queue],
        dataConverter,
        activities: activities[queue](),
        interceptors: { activity: activityInterceptors },
        workflowBundle,
        ...tuningOptions(options.tuning),
      }),
    );
  }
  return workers;
}

/** One run for several workers: one that fails stops the others, so the process ends whole. */
function runTogether(workers: readonly Worker[]): DonationWorkers {
  const shutdown = () => {
    for (const worker of workers) if (worker.getState() === 'RUNNING') worker.shutdown();
  };
  return {
    async run() {
      const runs = workers.map((worker) =>
        worker.run().catch((error: unknown) => {
          shutdown();
          throw error;
        }),
      );
      const results = await Promise.allSettled(runs);
      const failed = results.find((result) => result.status === 'rejected');
      if (failed) throw failed.reason;
    },
    shutdown,
  };
}
