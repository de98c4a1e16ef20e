import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { Logger } from 'pino';
import type { Running } from './start-parts';

/** What a worker process sends its parent once it polls (src/entry/worker.ts). */
export const WORKER_READY_MESSAGE = 'galang-worker-ready';

/**
 * Runs `count` Temporal worker processes (`src/entry/worker.ts`) beside the API, so workflow
 * tasks, activities and HTTP requests never wait on one event loop. Each gets its own metrics
 * port (`basePort + i`, none when 0). One that dies is replaced: its tasks time out on the
 * server and go to the others meanwhile; one that stopped on request (exit code 0) is not.
 */
export async function startWorkerProcesses(
  count: number,
  metricsBasePort: number,
  log: Logger,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Running & { pids(): number[] }> {
  let stopping = false;
  const children = new Set<ChildProcess>();
  const entry = require.resolve('../entry/worker');
  // From source (`npm start`, tests) the child needs tsx; from `dist/` it runs as it is.
  const execArgv = path.extname(entry) === '.ts' ? ['--import', 'tsx'] : process.execArgv;

  const start = (index: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const metricsPort = metricsBasePort > 0 ? metricsBasePort + index : 0;
      const child = fork(entry, {
        env: { ...env, WORKER_METRICS_PORT: String(metricsPort) },
        execArgv,
      });
      children.add(child);
      child.on('message', (message) => {
        if (message === WORKER_READY_MESSAGE) resolve();
      });
      child.once('exit', (code, signal) => {
        children.delete(child);
        // Exit code 0 is a stop on request: Ctrl-C signals the whole process group, so a child
        // may stop before this supervisor's turn comes. Only one that died is replaced.
        if (stopping || code === 0) {
          resolve();
          return;
        }
        log.warn({ pid: child.pid, code, signal }, 'worker process died; replacing it');
        start(index).then(resolve, reject);
      });
    });

  await Promise.all(Array.from({ length: count }, (_, index) => start(index)));
  log.info({ processes: count }, 'worker processes up');
  return {
    name: 'workers',
    pids: () => [...children].flatMap((child) => (child.pid === undefined ? [] : [child.pid])),
    async stop() {
      stopping = true;
      await Promise.all(
        [...children].map(
          (child) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null || child.signalCode !== null) {
                resolve();
                return;
              }
              child.once('exit', () => {
                resolve();
              });
              child.kill('SIGTERM');
            }),
        ),
      );
    },
  };
}
