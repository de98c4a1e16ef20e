import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'pino';
import type { WorkerQueue } from '../config/worker-config';
import type { Running } from './start-parts';

/** What a worker process sends its parent once it polls (src/entry/worker.ts). */
export const WORKER_READY_MESSAGE = 'galang-worker-ready';

/**
 * How much less CPU the receipts' process is given than the others (a nice value): in a rush
 * the donations' answers and credits go first, and the receipts catch up once it passes.
 */
export const RECEIPTS_NICENESS = 10;

/**
 * Runs `count` Temporal worker processes (`src/entry/worker.ts`) for the donations' task queue
 * beside the API, so workflow tasks, activities and HTTP requests never wait on one event loop,
 * and one more for the receipts' queue at {@link RECEIPTS_NICENESS}. Each gets its own metrics
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

  const receipts = count; // the index of the receipts' process, after the donations' ones
  const start = (index: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const metricsPort = metricsBasePort > 0 ? metricsBasePort + index : 0;
      const queue: WorkerQueue = index === receipts ? 'receipts' : 'donations';
      const child = fork(entry, {
        env: { ...env, WORKER_METRICS_PORT: String(metricsPort), WORKER_TASK_QUEUES: queue },
        execArgv,
      });
      if (queue === 'receipts') lowerPriority(child, log);
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

  const processes = count > 0 ? count + 1 : 0;
  await Promise.all(Array.from({ length: processes }, (_, index) => start(index)));
  log.info({ processes }, 'worker processes up');
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

/** A platform that refuses the lower priority still runs the process, at the usual one. */
function lowerPriority(child: ChildProcess, log: Logger): void {
  if (child.pid === undefined) return;
  try {
    os.setPriority(child.pid, RECEIPTS_NICENESS);
  } catch (error) {
    log.warn({ pid: child.pid, error }, "could not lower the receipts worker's priority");
  }
}
