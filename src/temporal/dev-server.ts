import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { searchAttributeNames } from '../../workflows/contracts';

/**
 * The Temporal CLI's dev server (server + Web UI in one binary), which is what runs Temporal on a
 * developer machine and in CI. Pinned to v1.5.1: later tags carry a `replace` directive that
 * `go install` refuses.
 */
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal@v1.5.1';

const projectRoot = path.resolve(__dirname, '../..');
const toolsBin = path.join(projectRoot, '.tools', 'bin');

type Log = (line: string) => void;

/** Finds `temporal` on PATH, then in `.tools/bin`; builds it there from the Go proxy if absent. */
export function ensureTemporalBinary(log: Log = () => undefined): string {
  const onPath = spawnSync('sh', ['-c', 'command -v temporal'], { encoding: 'utf8' });
  if (onPath.status === 0 && onPath.stdout.trim()) return onPath.stdout.trim();
  const local = path.join(toolsBin, 'temporal');
  if (existsSync(local)) return local;

  log(`Building the Temporal CLI (${TEMPORAL_CLI_MODULE}) into ${toolsBin}.`);
  log('The first build downloads and compiles for several minutes; later runs reuse it.');
  const started = Date.now();
  const build = (ldflags: string[]) =>
    spawnSync('go', ['install', ...ldflags, TEMPORAL_CLI_MODULE], {
      env: { ...process.env, CGO_ENABLED: '0', GOBIN: toolsBin },
      stdio: ['ignore', 'inherit', 'pipe'],
      encoding: 'utf8',
    });
  let result = build([]);
  if (result.status !== 0 && /linkname/.test(result.stderr)) {
    log('Retrying with -ldflags=-checklinkname=0 (a dependency uses //go:linkname).');
    result = build(['-ldflags=-checklinkname=0']);
  }
  if (result.error || result.status !== 0 || !existsSync(local)) {
    throw new Error(
      `Building the Temporal CLI failed (is Go installed?):\n${result.stderr || String(result.error)}`,
    );
  }
  log(`Built ${local} in ${Math.round((Date.now() - started) / 1000)} s.`);
  return local;
}

export interface DevServerOptions {
  port: number;
  uiPort: number;
  /** File for the server's SQLite state; omitted keeps everything in memory. */
  dbFile?: string;
  /** Where the PID and log go, so a later `stop` finds the server. */
  stateDir: string;
  namespace?: string;
  /** The Web UI's Codec Server (galang's `/v1/codec`), so it shows payloads decrypted. */
  codecEndpoint?: string;
  log?: Log;
  /** Dynamic config over {@link LOAD_DYNAMIC_CONFIG}, e.g. a benchmark's experiment. */
  dynamicConfig?: Record<string, unknown>;
  /** SQLite pragmas instead of {@link SQLITE_PRAGMAS} (a benchmark's baseline). */
  sqlitePragmas?: readonly string[];
  /** The Go runtime's GOGC for the server (a benchmark's experiment); Go's default otherwise. */
  goGc?: number;
}

/**
 * SQLite as a durable store that does not fsync every commit: the write-ahead log with
 * `synchronous=normal` survives a crash of the server (not a power cut of the machine) and cuts
 * the iowait that every workflow task paid under the default rollback journal.
 */
export const SQLITE_PRAGMAS = ['journal_mode=wal', 'synchronous=normal'] as const;

/**
 * Dynamic config for load: activities dispatched eagerly to the worker whose workflow task
 * scheduled them (no trip through matching), and one task-queue partition, which is all one
 * dev server needs (with the default four, tasks are forwarded between partitions). Measured by
 * `npm run bench:temporal-settings` (docs/benchmarks.md).
 */
export const LOAD_DYNAMIC_CONFIG: Readonly<Record<string, unknown>> = {
  'system.enableActivityEagerExecution': true,
  'matching.numTaskqueueReadPartitions': 1,
  'matching.numTaskqueueWritePartitions': 1,
};

/** The `start-dev` flags for the SQLite pragmas and the dynamic config. */
export function loadFlags(
  extra: Record<string, unknown> = {},
  pragmas: readonly string[] = SQLITE_PRAGMAS,
): string[] {
  return [
    ...pragmas.flatMap((pragma) => ['--sqlite-pragma', pragma]),
    ...Object.entries({ ...LOAD_DYNAMIC_CONFIG, ...extra }).flatMap(([key, value]) => [
      '--dynamic-config-value',
      `${key}=${JSON.stringify(value)}`,
    ]),
  ];
}

export interface DevServer {
  address: string;
  uiUrl: string;
  pid: number;
}

/** How often a start is tried when the server exits before it listens (a port taken meanwhile). */
const START_ATTEMPTS = 3;

/**
 * Starts `temporal server start-dev` detached and waits until it accepts connections. The server
 * picks its internal ports itself, bound a moment after it chose them, and a busy machine can
 * take one in between: a server that exits before it listens is started again, twice at most.
 */
export async function startDevServer(options: DevServerOptions): Promise<DevServer> {
  const log = options.log ?? (() => undefined);
  const binary = ensureTemporalBinary(log);
  mkdirSync(options.stateDir, { recursive: true });
  const address = `127.0.0.1:${options.port}`;
  for (let attempt = 1; ; attempt++) {
    const child = spawnDevServer(binary, options);
    try {
      await waitForPort('127.0.0.1', options.port, 60_000, () => child.exitCode !== null);
    } catch (error) {
      if (child.exitCode === null) throw error;
      if (attempt >= START_ATTEMPTS) {
        const tail = readFileSync(devServerLog(options.stateDir, options.port), 'utf8').slice(
          -1_500,
        );
        throw new Error(`The Temporal dev server exited ${attempt} times while starting:\n${tail}`);
      }
      log(`The Temporal dev server exited while starting (attempt ${attempt}); starting it again.`);
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      continue;
    }
    await waitForTemporal(address, options.namespace ?? 'default');
    return { address, uiUrl: `http://127.0.0.1:${options.uiPort}`, pid: child.pid ?? 0 };
  }
}

function spawnDevServer(binary: string, options: DevServerOptions): ChildProcess {
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--ui-port',
    String(options.uiPort),
    '--namespace',
    options.namespace ?? 'default',
    '--log-level',
    'warn',
    ...searchAttributeNames.flatMap((name) => ['--search-attribute', `${name}=Keyword`]),
    ...(options.dbFile ? ['--db-filename', options.dbFile] : []),
    ...loadFlags(options.dynamicConfig, options.sqlitePragmas),
    ...(options.codecEndpoint ? ['--ui-codec-endpoint', options.codecEndpoint] : []),
  ];
  const logFile = openSync(devServerLog(options.stateDir, options.port), 'a');
  const child = spawn(binary, args, {
    detached: true,
    stdio: ['ignore', logFile, logFile],
    env: options.goGc === undefined ? process.env : { ...process.env, GOGC: String(options.goGc) },
  });
  closeSync(logFile);
  child.unref();
  if (child.pid === undefined) throw new Error('Could not start the Temporal dev server');
  writeFileSync(pidFile(options.stateDir, options.port), String(child.pid));
  return child;
}

/** Where a dev server started with this state dir and port writes its output. */
export function devServerLog(stateDir: string, port: number): string {
  return path.join(stateDir, `temporal-${port}.log`);
}

/** Stops a dev server that {@link startDevServer} started with the same state dir and port. */
export async function stopDevServer(stateDir: string, port: number): Promise<boolean> {
  const file = pidFile(stateDir, port);
  if (!existsSync(file)) return false;
  const pid = Number(readFileSync(file, 'utf8'));
  rmSync(file, { force: true });
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return false;
  }
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  process.kill(pid, 'SIGKILL');
  return true;
}

function pidFile(stateDir: string, port: number): string {
  return path.join(stateDir, `temporal-${port}.pid`);
}

/** Whether something accepts TCP connections on host:port. */
export function isPortOpen(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => {
      done(false);
    });
    socket.once('connect', () => {
      done(true);
    });
    socket.once('error', () => {
      done(false);
    });
  });
}

async function waitForPort(
  host: string,
  port: number,
  timeoutMs: number,
  exited: () => boolean,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited()) throw new Error('The Temporal dev server exited while starting');
    if (await isPortOpen(host, port)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(
    `The Temporal dev server did not answer on ${host}:${port} within ${timeoutMs} ms`,
  );
}

/** Splits `host:port`. */
export function parseAddress(address: string): { host: string; port: number } {
  const index = address.lastIndexOf(':');
  return { host: address.slice(0, index), port: Number(address.slice(index + 1)) };
}

/**
 * Waits until the frontend answers for the namespace, not merely until the port is open: the
 * dev server accepts connections a moment before its namespace is registered.
 */
export async function waitForTemporal(
  address: string,
  namespace: string,
  timeoutMs = 60_000,
): Promise<void> {
  const { Connection } = await import('@temporalio/client');
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const connection = await Connection.connect({ address, connectTimeout: 2_000 });
      try {
        await connection.workflowService.describeNamespace({ namespace });
        return;
      } finally {
        await connection.close();
      }
    } catch (error) {
      lastError = error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  throw new Error(`Temporal at ${address} is not ready: ${String(lastError)}`);
}
