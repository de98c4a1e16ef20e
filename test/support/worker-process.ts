import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import type { Stack } from './stack';

const root = path.resolve(__dirname, '../..');

/**
 * Runs the real worker entry point (`src/entry/worker.ts`) as a child process on the stack's
 * task queue, so a test can kill it with SIGKILL mid-flight and start another.
 */
export async function spawnWorker(
  stack: Stack,
): Promise<{ child: ChildProcess; kill9(): Promise<void>; stop(): Promise<void> }> {
  const { config } = stack;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/entry/worker.ts'], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      DATABASE_URL: config.databaseUrl,
      REDIS_URL: config.redisUrl,
      REDIS_KEY_PREFIX: config.redisKeyPrefix,
      TEMPORAL_ADDRESS: config.temporal.address,
      TEMPORAL_TASK_QUEUE: config.temporal.taskQueue,
      SIMULATOR_URL: stack.simulatorUrl,
      SIMULATOR_WEBHOOK_SECRET: config.simulator.webhookSecret,
      API_KEYS: 'unused:unused-secret',
      OPERATOR_KEYS: 'unused:unused-secret',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      resolve();
    }),
  );
  const stderr: string[] = [];
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`worker did not start: ${stderr.join('')}`));
    }, 60_000);
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.includes('worker polling')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code}: ${stderr.join('')}`));
    });
  });
  return {
    child,
    async kill9() {
      child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
