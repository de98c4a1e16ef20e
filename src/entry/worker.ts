import { createDatabase } from '../db/database';
import { runEntry } from '../runtime/entry';
import { checkProvidersAtBoot, waitForPostgres } from '../runtime/boot-waits';
import { createProviders } from '../runtime/open-resources';
import { installWorkerRuntime, startWorker, startWorkerMetrics } from '../runtime/start-parts';
import { WORKER_READY_MESSAGE } from '../runtime/worker-processes';

/**
 * Production entry point: the Temporal worker of the task queues WORKER_TASK_QUEUES names (both,
 * unless set). `npm start` runs WORKER_PROCESSES of these for donations beside the API, and one
 * for receipts. It waits for Postgres and Temporal (and its namespace) with backoff rather than
 * exiting, and exits only on a misconfiguration.
 */
runEntry('worker', async (config, log, parts) => {
  const exporterUrl = await installWorkerRuntime(config, log);
  const db = createDatabase({ connectionString: config.databaseUrl, max: 10 });
  parts.push({ name: 'db', stop: () => db.destroy() });
  await waitForPostgres(config, db, log);
  await checkProvidersAtBoot(config, db, createProviders(config), log);
  parts.push(await startWorker(config, db, log));
  if (exporterUrl !== undefined) parts.push(await startWorkerMetrics(config, exporterUrl, log));
  log.info(
    {
      taskQueue: config.temporal.taskQueue,
      queues: config.worker.taskQueues,
      metricsPort: config.workerMetricsPort || undefined,
    },
    'worker polling',
  );
  // Forked by `npm start` (src/runtime/worker-processes.ts): tell the parent we poll.
  process.send?.(WORKER_READY_MESSAGE);
});
