import cluster from 'node:cluster';
import type { Worker } from 'node:cluster';
import type { Logger } from 'pino';
import { watchHeartbeats } from './api-heartbeat';
import type { Running } from './start-parts';

/**
 * Runs the API as `count` processes on one port (node:cluster shares the listening socket),
 * all opening the same LMDB environment. A process that dies is replaced (one that stops on
 * request, with exit code 0, is not), and so is one whose event loop stopped beating (stuck in a
 * lock: `watchHeartbeats`); claims it held are recovered by the lease takeover.
 */
export async function startApiCluster(
  count: number,
  log: Logger,
): Promise<Running & { url: string }> {
  cluster.setupPrimary({ exec: require.resolve('../entry/api') });
  let stopping = false;
  let url = '';

  const fork = (): Promise<Worker> =>
    new Promise((resolve, reject) => {
      const worker = cluster.fork({ GALANG_CLUSTER_WORKER: '1' });
      const unwatch = watchHeartbeats(worker, log);
      worker.once('listening', (address) => {
        url = `http://${address.address}:${address.port}`;
        resolve(worker);
      });
      worker.once('exit', (code, signal) => {
        unwatch();
        // Exit code 0 is a stop on request (Ctrl-C reaches every process of the group).
        if (stopping || code === 0) return;
        log.warn({ pid: worker.process.pid, code, signal }, 'api process died; replacing it');
        fork().catch(reject);
      });
    });

  const workers = await Promise.all(Array.from({ length: count }, fork));
  log.info({ processes: count, pids: workers.map((w) => w.process.pid) }, 'api cluster up');
  return {
    name: 'api-cluster',
    url,
    async stop() {
      stopping = true;
      await Promise.all(
        Object.values(cluster.workers ?? {}).map(
          (worker) =>
            new Promise<void>((resolve) => {
              if (!worker || worker.isDead()) {
                resolve();
                return;
              }
              worker.once('exit', () => {
                resolve();
              });
              worker.process.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}
