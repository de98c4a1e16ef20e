import { openDatabase } from '../runtime/infrastructure';
import { runEntry } from '../runtime/entry';
import { startApi } from '../runtime/services';

/** Production entry point: the HTTP API alone (run the worker beside it). */
runEntry('api', async (config, log, parts) => {
  const db = await openDatabase(config);
  parts.push({ name: 'db', stop: () => db.destroy() });
  const api = await startApi(config, db);
  parts.push(api);
  log.info({ url: api.url }, 'api listening');
});
