import { openDatabase } from '../runtime/open-resources';
import { runEntry } from '../runtime/entry';
import { installWorkerRuntime, startWorker, startWorkerMetrics } from '../runtime/start-parts';
import { WORKER_READY_MESSAGE } from '../runtime/worker-processes';

/**
 * Production entry point: the Temporal worker for the donation task queue. `npm start` runs
 * WORKER_PROCESSES of these beside the API.
 */
runEntry('worker', async (config, log, parts) => {
  const exporterUrl = await installWorkerRuntime(config, log);
  const db = await openDatabase(config);
  parts.push({ name: 'db', stop: () => db.destroy() });
  parts.push(await startWorker(config, db));
  if (exporterUrl !== undefined) parts.push(await startWorkerMetrics(config, exporterUrl, log));
  log.info(
    { taskQueue: config.temporal.taskQueue, metricsPort: config.workerMetricsPort || undefined },
    'worker polling',
  );
  // Forked by `npm start` (src/runtime/worker-processes.ts): tell the parent we poll.
  process.send?.(WORKER_READY_MESSAGE);
});
