import { spawnSync } from 'node:child_process';
import net from 'node:net';

/** Where the stack reports what it does: one line at a time. */
export type Log = (line: string) => void;

/**
 * Runs a command to completion and returns its stdout; a non-zero exit throws with its stderr,
 * so a failed setup step stops the stack with the tool's own words.
 */
export function run(
  command: string,
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string>; input?: string } = {},
): string {
  const result = spawnSync(command, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    input: options.input,
    encoding: 'utf8',
    stdio: ['pipe', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error || result.status !== 0) {
    const output = `${result.stderr}${result.stdout}`.trim();
    throw new Error(`${command} ${args.join(' ')} failed:\n${output || String(result.error)}`);
  }
  return result.stdout;
}

/**
 * `count` distinct TCP ports nothing listens on right now, below the kernel's ephemeral range
 * (outgoing connections never take them) and below 32768: Temporal stores membership ports in
 * a PostgreSQL `smallint`.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  while (servers.length < count) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const server = await new Promise<net.Server | undefined>((resolve) => {
      const candidate = net.createServer();
      candidate.once('error', () => {
        resolve(undefined);
      });
      candidate.listen(port, '127.0.0.1', () => {
        resolve(candidate);
      });
    });
    if (server) servers.push(server);
  }
  const ports = servers.map((server) => (server.address() as net.AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

/** Free ports by name, from {@link freePorts}. */
export async function namedPorts<K extends string>(
  names: readonly K[],
): Promise<Record<K, number>> {
  const ports = await freePorts(names.length);
  return Object.fromEntries(names.map((name, i) => [name, ports[i]])) as Record<K, number>;
}

/** Calls `probe` until it returns a value (not undefined) or `timeoutMs` passes. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
  intervalMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    await sleep(intervalMs);
  }
  const reason = lastError instanceof Error ? `: ${lastError.message}` : '';
  throw new Error(`${what} within ${timeoutMs} ms${reason}`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
