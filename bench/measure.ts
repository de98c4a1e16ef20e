import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import autocannon from 'autocannon';

/** Latency percentiles of a set of samples, in milliseconds. */
export function percentiles(samplesMs: number[]): { p50: number; p99: number } {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { p50: at(0.5), p99: at(0.99) };
}

export interface OpResult {
  opsPerSecond: number;
  p50: number;
  p99: number;
}

/**
 * Runs `op` `total` times with `inFlight` calls outstanding at once, timing each call.
 * Throughput is total / wall time.
 */
export async function measureOps(
  total: number,
  inFlight: number,
  op: (i: number) => unknown,
): Promise<OpResult> {
  const samples: number[] = [];
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < total) {
        const i = next++;
        const t0 = process.hrtime.bigint();
        await op(i);
        samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { opsPerSecond: total / seconds, ...percentiles(samples) };
}

export interface HttpResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
}

/** What autocannon sends, and how hard. */
export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  connections: number;
  pipelining: number;
  seconds: number;
}

export function mean(values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length;
}

export async function loadTest(options: LoadOptions): Promise<HttpResult> {
  const result = await autocannon({
    url: options.url,
    method: options.method ?? 'POST',
    headers: options.headers,
    ...(options.body === undefined ? {} : { body: options.body }),
    connections: options.connections,
    pipelining: options.pipelining,
    duration: options.seconds,
  });
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
  };
}

/**
 * Starts a bench server process and returns its URL once it listens. `BENCH_NODE_ARGS` adds
 * Node flags to it, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile the server under load.
 */
export async function startServer(
  kind: string,
  env: Record<string, string> = {},
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
      '--import',
      'tsx',
      path.join(__dirname, 'bench-servers.ts'),
      kind,
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, LOG_LEVEL: 'silent', ...env },
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout }).once('line', (line) => {
      resolve((JSON.parse(line) as { url: string }).url);
    });
    child.once('exit', (code) => {
      reject(new Error(`bench server exited with ${code}`));
    });
  });
  return { url, child };
}

/**
 * One round of a route benchmark: starts a bench server of `kind`, loads `path` for 2 s to warm
 * it up, then measures it for `load.seconds`, and stops it.
 */
export async function measureServer(
  kind: string,
  env: Record<string, string>,
  path: string,
  load: Omit<LoadOptions, 'url'>,
): Promise<HttpResult> {
  const server = await startServer(kind, env);
  try {
    const options = { ...load, url: `${server.url}${path}` };
    await loadTest({ ...options, seconds: 2 });
    return await loadTest(options);
  } finally {
    server.child.kill();
  }
}
