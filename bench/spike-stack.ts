import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
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
  /** CPU seconds used so far by each kind of process of the stack. */
  cpu(): Record<ProcessKind, number>;
  stop(): Promise<void>;
}

export type ProcessKind = 'api' | 'worker' | 'temporal' | 'supervisor';

/**
 * Starts the stack exactly as `npm start` does (src/entry/dev.ts: the Temporal dev server with
 * the same settings, WORKER_PROCESSES workers, API_PROCESSES API processes, the simulator), on
 * free ports, a fresh data dir and its own database and Redis prefix. The caller's environment
 * passes through, so WORKER_* and EARLY_RETURN_* settings can be varied per run.
 */
export async function startSpikeStack(autoPayMs: number): Promise<SpikeStack> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'galang-spike-'));
  const port = await freePort();
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
  };
  delete env.SIMULATOR_URL;
  delete env.SIMULATOR_WEBHOOK_URL;
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/entry/dev.ts'], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('galang is up')) resolve();
    });
    child.once('exit', (code) => {
      reject(new Error(`npm start exited with ${code} before it was up`));
    });
  });
  child.stdout.resume();
  return {
    apiUrl: `http://127.0.0.1:${port}`,
    temporalAddress,
    databaseUrl,
    redisPrefix,
    cpu: () => cpuByKind(child),
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** CPU seconds (user + system) of the supervisor and every process below it, by kind. */
function cpuByKind(supervisor: ChildProcess): Record<ProcessKind, number> {
  const totals: Record<ProcessKind, number> = { api: 0, worker: 0, temporal: 0, supervisor: 0 };
  const ticks = 100; // USER_HZ on Linux
  for (const pid of descendants(supervisor.pid ?? 0)) {
    const stat = procStat(pid);
    if (!stat) continue;
    const cmdline = readProc(pid, 'cmdline')?.replaceAll('\0', ' ') ?? '';
    const kind: ProcessKind = cmdline.includes('server start-dev')
      ? 'temporal'
      : cmdline.includes('entry/worker')
        ? 'worker'
        : cmdline.includes('entry/api')
          ? 'api'
          : 'supervisor';
    totals[kind] += (stat.utime + stat.stime) / ticks;
  }
  return totals;
}

/** The pid and every live descendant of it. */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    const child = Number(entry);
    if (!Number.isInteger(child)) continue;
    const parent = procStat(child)?.ppid;
    if (parent !== undefined) children.set(parent, [...(children.get(parent) ?? []), child]);
  }
  const found = [pid];
  for (let i = 0; i < found.length; i++) found.push(...(children.get(found[i] ?? -1) ?? []));
  return found;
}

function procStat(pid: number): { ppid: number; utime: number; stime: number } | undefined {
  const stat = readProc(pid, 'stat');
  if (!stat) return undefined;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { ppid: Number(fields[1]), utime: Number(fields[11]), stime: Number(fields[12]) };
}

function readProc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * The calibration worker (bench/calibration/worker.ts) as a process of its own, sized with the
 * same WORKER_* settings as galang's workers.
 */
export async function startCalibrationWorker(
  temporalAddress: string,
  taskQueue: string,
): Promise<{ stop(): Promise<void> }> {
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
    async stop() {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
