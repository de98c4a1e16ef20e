import cluster from 'node:cluster';
import { openDatabase } from '../runtime/open-resources';
import { runEntry } from '../runtime/entry';
import { startApiCluster } from '../runtime/api-cluster';
import { startApi } from '../runtime/start-parts';

/**
 * Production entry point: the HTTP API (run the worker beside it). With API_PROCESSES > 1 this
 * process only supervises that many API processes sharing the port and the LMDB environment.
 */
runEntry('api', async (config, log, parts) => {
  if (cluster.isPrimary && config.apiProcesses > 1) {
    const api = await startApiCluster(config.apiProcesses, log);
    parts.push(api);
    log.info({ url: api.url, processes: config.apiProcesses }, 'api listening');
    return;
  }
  const db = await openDatabase(config);
  parts.push({ name: 'db', stop: () => db.destroy() });
  const api = await startApi(config, db);
  parts.push(api);
  log.info({ url: api.url, pid: process.pid }, 'api listening');
});
