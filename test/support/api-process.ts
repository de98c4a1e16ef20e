import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import type { Config } from '../../src/config/config';
import { CLIENT_SECRET, OPERATOR_SECRET, OTHER_CLIENT_SECRET } from './stack';

const root = path.resolve(__dirname, '../..');

export interface ApiProcess {
  url: string;
  pid: number;
  child: ChildProcess;
  /** SIGKILL: no cleanup, no release, no flush; what a crash looks like. */
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Runs the real API entry point (`src/entry/api.ts`) as a separate process, configured like the
 * test stack, so tests can share one LMDB environment across processes and kill -9 one of them.
 */
export async function spawnApi(
  config: Config,
  overrides: Record<string, string> = {},
): Promise<ApiProcess> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    HOST: '127.0.0.1',
    PORT: '0',
    DATABASE_URL: config.databaseUrl,
    REDIS_URL: config.redisUrl,
    REDIS_KEY_PREFIX: config.redisKeyPrefix,
    TEMPORAL_ADDRESS: config.temporal.address,
    TEMPORAL_TASK_QUEUE: config.temporal.taskQueue,
    LMDB_PATH: config.lmdbPath,
    API_KEYS: `client-a:${CLIENT_SECRET},client-b:${OTHER_CLIENT_SECRET}`,
    OPERATOR_KEYS: `ops:${OPERATOR_SECRET}`,
    PAYMENT_TIMEOUT_SECONDS: String(config.paymentTimeoutSeconds),
    SIMULATOR_WEBHOOK_SECRET: config.simulator.webhookSecret,
    INBOX_REDELIVERY_INTERVAL_MS: String(config.inboxRedeliveryIntervalMs),
    ...overrides,
  };
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/entry/api.ts'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      resolve();
    }),
  );
  const stderr: string[] = [];
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));

  const url = await new Promise<string>((resolve, reject) => {
    const lines = readline.createInterface({ input: child.stdout });
    const timer = setTimeout(() => {
      reject(new Error(`API did not start: ${stderr.join('')}`));
    }, 30_000);
    lines.on('line', (line) => {
      try {
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === 'api listening' && entry.url) {
          clearTimeout(timer);
          resolve(entry.url);
        }
      } catch {
        // not a log line
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`API exited with ${code}: ${stderr.join('')}`));
    });
  });

  return {
    url,
    pid: child.pid ?? -1,
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
