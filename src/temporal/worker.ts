import { bundleWorkflowCode, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import type { Logger, WorkerOptions } from '@temporalio/worker';
import { createDonationActivities, createReconciliationActivities } from '../../activities';
import { activityMetricsInterceptor } from './activity-metrics-interceptor';
import { correlationActivityInterceptor } from './correlation-interceptor';
import { createDataConverter } from './payload-codec';
import { connectionOptions } from './temporal-connection';
import type { TemporalConnectionConfig } from './temporal-connection';
import { createWorkerMetrics } from './worker-metrics';
import type { DonationActivityDeps, ReconciliationActivityDeps } from '../../activities';

export interface DonationWorkerOptions {
  /** Address, namespace, TLS, API key and payload keys: the same as the clients'. */
  temporal: TemporalConnectionConfig;
  taskQueue: string;
  deps: Omit<DonationActivityDeps, 'metrics'>;
  reconciliation: ReconciliationActivityDeps;
  /** A prebuilt bundle (tests share one); otherwise the worker bundles `workflows/` itself. */
  workflowBundle?: WorkerOptions['workflowBundle'];
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
  // The Runtime's meter: exported by its Prometheus endpoint when one is configured, else a no-op.
  const metrics = createWorkerMetrics(Runtime.instance().metricMeter);
  const worker = await Worker.create({
    connection,
    namespace: options.temporal.namespace,
    taskQueue: options.taskQueue,
    // Outside the sandbox: workflow code sees plain values, histories hold ciphertext.
    dataConverter: createDataConverter(options.temporal.payloadKeys),
    activities: {
      ...createDonationActivities({ ...options.deps, metrics }),
      ...createReconciliationActivities(options.reconciliation),
    },
    interceptors: {
      activity: [correlationActivityInterceptor, activityMetricsInterceptor(metrics)],
    },
    workflowBundle,
  });
  return { worker, connection };
}
