import { openDatabase } from '../runtime/infrastructure';
import { runEntry } from '../runtime/entry';
import { startWorker } from '../runtime/services';

/** Production entry point: the Temporal worker for the donation task queue. */
runEntry('worker', async (config, log, parts) => {
  const db = await openDatabase(config);
  parts.push({ name: 'db', stop: () => db.destroy() });
  parts.push(await startWorker(config, db));
  log.info({ taskQueue: config.temporal.taskQueue }, 'worker polling');
});
