import { NativeConnection, Worker } from '@temporalio/worker';
import type { WorkerOptions } from '@temporalio/worker';
import { createDonationActivities } from '../../activities';
import type { DonationActivityDeps } from '../../activities';

export interface DonationWorkerOptions {
  address: string;
  namespace: string;
  taskQueue: string;
  deps: DonationActivityDeps;
  /** A prebuilt bundle (tests share one); otherwise the worker bundles `workflows/` itself. */
  workflowBundle?: WorkerOptions['workflowBundle'];
}

export const workflowsPath = require.resolve('../../workflows');

/** Builds a worker for the donation task queue from its dependencies. */
export async function createDonationWorker(
  options: DonationWorkerOptions,
): Promise<{ worker: Worker; connection: NativeConnection }> {
  const connection = await NativeConnection.connect({ address: options.address });
  const worker = await Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    activities: createDonationActivities(options.deps),
    ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : { workflowsPath }),
  });
  return { worker, connection };
}
