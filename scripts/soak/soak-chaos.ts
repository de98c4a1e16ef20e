import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { run, sleep, waitFor } from '../stack/commands';
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
  node: 'drop a node behind nginx',
} as const;
export const FAULT_KINDS = Object.values(FAULTS);
export type FaultKind = (typeof FAULTS)[keyof typeof FAULTS];

export interface ChaosOutcome {
  injected: Map<FaultKind, number>;
  /** Faults after which what was broken was not back within the wait. */
  unrecovered: Map<FaultKind, number>;
}

export interface ChaosOptions {
  stack: ProductionStack;
  disk: LmdbDisk;
  /** Pause between one fault's recovery and the next fault. */
  intervalMs: number;
  /** How long the LMDB disk stays full. */
  diskFullMs: number;
  /** How long a dropped node stays down. */
  nodeDownMs: number;
  stopped: () => boolean;
  /** The kinds to inject; all by default. */
  kinds?: readonly FaultKind[];
  log: Log;
}

/**
 * Injects one fault after another, every kind in turn (shuffled per round, so a short soak
 * still sees each), and waits for the supervisor to bring back what it broke before the next.
 * Returns how many of each kind it injected, and after how many the part did not come back.
 */
export async function runChaos(options: ChaosOptions): Promise<ChaosOutcome> {
  const { stack, log } = options;
  const injected = new Map<FaultKind, number>(FAULT_KINDS.map((kind) => [kind, 0]));
  const unrecovered = new Map<FaultKind, number>();
  const part = (name: string): Supervised => {
    const found = stack.processes.get(name);
    if (!found) throw new Error(`the stack runs no ${name}`);
    return found;
  };
  const crashAndWait = async (
    process: Supervised,
    signal: NodeJS.Signals = 'SIGKILL',
    downForMs = 0,
  ) => {
    process.crash(signal, downForMs);
    await sleep(1_000 + downForMs);
    return process.running(180_000).then(
      () => true,
      () => false,
    );
  };
  const faults: Record<FaultKind, () => Promise<boolean>> = {
    'kill -9 an API process': async () => {
      const api = part(anyOf(stack.apiNodes));
      const children = () =>
        run('ps', ['--ppid', String(api.pid), '-o', 'pid='])
          .trim()
          .split(/\s+/)
          .filter(Boolean)
          .map(Number);
      const before = children();
      const victim = before[randomInt(before.length)] ?? -1;
      process.kill(victim, 'SIGKILL');
      // Back once the cluster's primary has replaced it and the new process listens.
      const back = await waitFor(
        'the API process replaced',
        async () => {
          const now = children();
          if (now.length < before.length || now.includes(victim)) return undefined;
          const log = readFileSync(api.spec.logFile, 'utf8');
          const listening = now.filter((pid) => log.includes(`"pid":${pid},"msg":"api listening"`));
          return listening.length === now.length ? true : undefined;
        },
        120_000,
        500,
      ).catch(() => false);
      if (!back) log('  the API process was not replaced by a listening one within 2 minutes');
      return back;
    },
    'kill -9 a worker': () => crashAndWait(part(`worker-${randomInt(2) + 1}`)),
    'kill -9 the Temporal server': () => crashAndWait(part('temporal-server')),
    "restart galang's PostgreSQL": () => crashAndWait(part('postgres'), 'SIGQUIT'),
    "restart Temporal's PostgreSQL": () => crashAndWait(part('temporal-postgres'), 'SIGQUIT'),
    'restart Redis': () => crashAndWait(part('redis')),
    'drop a node behind nginx': async () => {
      const node = part(anyOf(stack.apiNodes));
      log(`  ${node.spec.name} is down for ${options.nodeDownMs / 1000} s`);
      return crashAndWait(node, 'SIGKILL', options.nodeDownMs);
    },
    'fill the LMDB disk': async () => {
      const bytes = options.disk.fill();
      log(`  the LMDB disk is full (${Math.round(bytes / 1024 / 1024)} MiB of filler)`);
      await sleep(options.diskFullMs);
      options.disk.free();
      return true;
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
    const back = await faults[kind]();
    injected.set(kind, (injected.get(kind) ?? 0) + 1);
    if (back) log(`  back after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    else unrecovered.set(kind, (unrecovered.get(kind) ?? 0) + 1);
  }
  return { injected, unrecovered };
}

function anyOf<T>(items: readonly T[]): T {
  const item = items[randomInt(items.length)];
  if (item === undefined) throw new Error('nothing to choose from');
  return item;
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
