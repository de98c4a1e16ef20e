import { openDatabase } from '../runtime/infrastructure';
import { runEntry } from '../runtime/entry';
import { installWorkerRuntime, startWorker } from '../runtime/services';

/** Production entry point: the Temporal worker for the donation task queue. */
runEntry('worker', async (config, log, parts) => {
  installWorkerRuntime(config, log);
  const db = await openDatabase(config);
  parts.push({ name: 'db', stop: () => db.destroy() });
  parts.push(await startWorker(config, db));
  log.info(
    { taskQueue: config.temporal.taskQueue, metricsPort: config.workerMetricsPort || undefined },
    'worker polling',
  );
});
