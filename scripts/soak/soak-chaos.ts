import { randomInt } from 'node:crypto';
import { run, sleep } from '../stack/commands';
import type { Log } from '../stack/commands';
import type { ProductionStack } from '../stack/production-stack';
import type { Supervised } from '../stack/supervisor';
import type { LmdbDisk } from './lmdb-disk';

/** Every fault, by the short name `SOAK_FAULTS` takes, and what it does. */
export const FAULTS = {
  api: 'kill -9 an API process',
  worker: 'kill -9 a worker',
  temporal: 'kill -9 the Temporal server',
  postgres: "restart galang's PostgreSQL",
  'temporal-postgres': "restart Temporal's PostgreSQL",
  redis: 'restart Redis',
  'lmdb-disk': 'fill the LMDB disk',
} as const;
export const FAULT_KINDS = Object.values(FAULTS);
export type FaultKind = (typeof FAULTS)[keyof typeof FAULTS];

export interface ChaosOptions {
  stack: ProductionStack;
  disk: LmdbDisk;
  /** Pause between one fault's recovery and the next fault. */
  intervalMs: number;
  /** How long the LMDB disk stays full. */
  diskFullMs: number;
  stopped: () => boolean;
  /** The kinds to inject; all by default. */
  kinds?: readonly FaultKind[];
  log: Log;
}

/**
 * Injects one fault after another, every kind in turn (shuffled per round, so a short soak
 * still sees each), and waits for the supervisor to bring back what it broke before the next.
 * Returns how many of each kind it injected.
 */
export async function runChaos(options: ChaosOptions): Promise<Map<FaultKind, number>> {
  const { stack, log } = options;
  const injected = new Map<FaultKind, number>(FAULT_KINDS.map((kind) => [kind, 0]));
  const part = (name: string): Supervised => {
    const found = stack.processes.get(name);
    if (!found) throw new Error(`the stack runs no ${name}`);
    return found;
  };
  const crashAndWait = async (process: Supervised, signal: NodeJS.Signals = 'SIGKILL') => {
    process.crash(signal);
    await sleep(1_000);
    await process.running(180_000);
  };
  const faults: Record<FaultKind, () => Promise<void>> = {
    'kill -9 an API process': async () => {
      const primary = part('api').pid;
      const children = run('ps', ['--ppid', String(primary), '-o', 'pid='])
        .trim()
        .split(/\s+/);
      const victim = Number(children[randomInt(children.length)]);
      process.kill(victim, 'SIGKILL');
      await sleep(3_000);
    },
    'kill -9 a worker': () => crashAndWait(part(`worker-${randomInt(2) + 1}`)),
    'kill -9 the Temporal server': () => crashAndWait(part('temporal-server')),
    "restart galang's PostgreSQL": () => crashAndWait(part('postgres'), 'SIGQUIT'),
    "restart Temporal's PostgreSQL": () => crashAndWait(part('temporal-postgres'), 'SIGQUIT'),
    'restart Redis': () => crashAndWait(part('redis')),
    'fill the LMDB disk': async () => {
      const bytes = options.disk.fill();
      log(`  the LMDB disk is full (${Math.round(bytes / 1024 / 1024)} MiB of filler)`);
      await sleep(options.diskFullMs);
      options.disk.free();
    },
  };

  let round: FaultKind[] = [];
  while (!options.stopped()) {
    await sleep(options.intervalMs);
    if (options.stopped()) break;
    if (round.length === 0) round = shuffled(options.kinds ?? FAULT_KINDS);
    const kind = round.shift();
    if (kind === undefined) continue;
    const started = Date.now();
    log(`fault: ${kind}`);
    await faults[kind]();
    injected.set(kind, (injected.get(kind) ?? 0) + 1);
    log(`  back after ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  return injected;
}

/** Fisher–Yates. */
function shuffled<T>(items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}
