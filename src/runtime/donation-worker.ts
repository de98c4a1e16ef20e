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
import type { WorkerTuning } from '../config/config';
import type { Services } from './create-services';

export interface DonationWorkerOptions {
  /** Address, namespace, TLS, API key and payload keys: the same as the clients'. */
  temporal: TemporalConnectionConfig;
  taskQueue: string;
  /** The graph from createServices, on the worker's own client: activities start workflows. */
  services: Services;
  providers: ProviderRegistry;
  config: Pick<Config, 'latePaymentPolicy' | 'mail'>;
  /** A prebuilt bundle (tests share one); otherwise the worker bundles `workflows/` itself. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /** Slots, pollers and cache (WORKER_* settings); the SDK's defaults where absent. */
  tuning?: WorkerTuning;
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

/** Builds a worker for the donation task queue (donations and reconciliation) from its dependencies. */
export async function createDonationWorker(
  options: DonationWorkerOptions,
): Promise<{ worker: Worker; connection: NativeConnection }> {
  const workflowBundle = options.workflowBundle ?? (await bundleWorkflows());
  const connection = await NativeConnection.connect(connectionOptions(options.temporal));
  try {
    return { worker: await createWorkerOn(connection, workflowBundle, options), connection };
  } catch (error) {
    // Worker.create checks the namespace: a boot that waits for it tries again on a new one.
    await connection.close().catch(() => undefined);
    throw error;
  }
}

async function createWorkerOn(
  connection: NativeConnection,
  workflowBundle: NonNullable<WorkerOptions['workflowBundle']>,
  options: DonationWorkerOptions,
): Promise<Worker> {
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
  const reconciliation: ReconciliationActivityDeps = { reconciler: services.reconciler };
  const { mail } = options.config;
  const receiptActivities = createReceiptActivities({
    receipts: services.receipts,
    mailDeliveries: services.mailDeliveries,
    issuer: { prefix: mail.organization.receiptPrefix, timeZone: mail.organization.timeZone },
    receiptWorkflows: services.receiptWorkflows,
    sender: services.receiptMailer,
    metrics,
  });
  return Worker.create({
    connection,
    namespace: options.temporal.namespace,
    taskQueue: options.taskQueue,
    // Outside the sandbox: workflow code sees plain values, histories hold ciphertext.
    dataConverter: createDataConverter(options.temporal.payloadKeys),
    activities: {
      ...createDonationActivities(deps),
      ...createReversalActivities(deps),
      ...createReconciliationActivities(reconciliation),
      ...receiptActivities,
      ...createPledgeActivities({ pledges: services.pledges, billing: services.pledgeBilling }),
    },
    interceptors: {
      activity: [
        correlationActivityInterceptor,
        activityMetricsInterceptor(metrics),
        permanentFailureInterceptor,
      ],
    },
    workflowBundle,
    ...tuningOptions(options.tuning),
  });
}
