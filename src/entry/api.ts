import cluster from 'node:cluster';
import { runEntry } from '../runtime/entry';
import { startApiCluster } from '../runtime/api-cluster';
import { beatForPrimary } from '../runtime/api-heartbeat';
import { startApi } from '../runtime/start-parts';

/**
 * Production entry point: the HTTP API (run the worker beside it). With API_PROCESSES > 1 this
 * process only supervises that many API processes sharing the port and the LMDB environment.
 * It listens at once and says `api ready` once booted (Postgres migrated, Temporal reached);
 * it waits for either rather than exiting, and exits only on a misconfiguration.
 */
runEntry('api', async (config, log, parts) => {
  if (cluster.isPrimary && config.apiProcesses > 1) {
    const api = await startApiCluster(config.apiProcesses, log);
    parts.push(api);
    log.info({ url: api.url, processes: config.apiProcesses }, 'api listening');
    return;
  }
  if (cluster.isWorker) beatForPrimary();
  const api = await startApi(config, log);
  parts.push(api);
  log.info({ url: api.url, pid: process.pid }, 'api listening');
  await api.booted;
  log.info({ url: api.url, pid: process.pid }, 'api ready');
});
