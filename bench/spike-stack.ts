import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { freePort } from '../test/support/free-port';

const root = path.resolve(__dirname, '..');

/** The bench's API client; the stack is started with it as its only key. */
export const SPIKE_CLIENT = { id: 'spike', secret: 'spike-bench-secret-1' };

export interface SpikeStack {
  apiUrl: string;
  temporalAddress: string;
  databaseUrl: string;
  redisPrefix: string;
  /** The supervisor's pid: every process of the stack runs below it (bench/cpu-meter.ts). */
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts the stack exactly as `npm start` does (src/entry/dev.ts: the Temporal dev server with
 * the same settings, WORKER_PROCESSES workers, API_PROCESSES API processes, the simulator), on
 * free ports, a fresh data dir and its own database and Redis prefix. The caller's environment
 * passes through, so WORKER_* and EARLY_RETURN_* settings can be varied per run.
 */
export async function startSpikeStack(autoPayMs: number): Promise<SpikeStack> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'galang-spike-'));
  const port = await freePort();
  const mailPort = await freePort();
  // A staging cluster instead of the dev server, when given (npm start uses what answers there).
  const temporalAddress = process.env.SPIKE_TEMPORAL_ADDRESS ?? `127.0.0.1:${await freePort()}`;
  const run = Date.now().toString(36);
  const databaseUrl =
    process.env.SPIKE_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/galang_bench_spike';
  const redisPrefix = `galang-spike:${run}:`;
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    NODE_ENV: 'development',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    DATA_DIR: dataDir,
    PORT: String(port),
    SIMULATOR_PORT: String(await freePort()),
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_UI_PORT: String(await freePort()),
    WORKER_METRICS_PORT: '0',
    DATABASE_URL: databaseUrl,
    REDIS_KEY_PREFIX: redisPrefix,
    API_KEYS: `${SPIKE_CLIENT.id}:${SPIKE_CLIENT.secret}`,
    SIMULATOR_AUTO_PAY_MS: String(autoPayMs),
    // A mail sink of its own, beside an `npm start` that may hold the default port.
    MAIL_SINK_PORT: String(mailPort),
    SMTP_URL: `smtp://127.0.0.1:${mailPort}`,
  };
  delete env.SIMULATOR_URL;
  delete env.SIMULATOR_WEBHOOK_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/entry/dev.ts'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: string[] = [];
  await new Promise<void>((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      if (line.startsWith('galang is up')) resolve();
    });
    child.once('exit', (code) => {
      const last = lines.slice(-15).join('\n');
      reject(new Error(`npm start exited with ${code} before it was up:\n${last}`));
    });
  });
  child.stdout.resume();
  return {
    apiUrl: `http://127.0.0.1:${port}`,
    temporalAddress,
    databaseUrl,
    redisPrefix,
    pid: child.pid ?? 0,
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The calibration worker (bench/calibration/worker.ts) as a process of its own, sized with the
 * same WORKER_* settings as galang's workers.
 */
export async function startCalibrationWorker(
  temporalAddress: string,
  taskQueue: string,
): Promise<{ pid: number; stop(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(__dirname, 'calibration', 'worker.ts')],
    {
      cwd: root,
      env: { ...process.env, TEMPORAL_ADDRESS: temporalAddress, CALIBRATION_TASK_QUEUE: taskQueue },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).once('line', () => {
      child.stdout.resume();
      resolve();
    });
    child.once('exit', (code) => {
      reject(new Error(`the calibration worker exited with ${code}`));
    });
  });
  return {
    pid: child.pid ?? 0,
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
