import { readdirSync, readFileSync } from 'node:fs';

/** The process kinds a spike level is charged to. */
export const CPU_KINDS = [
  'api',
  'worker',
  'receipts',
  'temporal',
  'postgres',
  'simulator',
  'yardstick',
  'bench',
] as const;
export type CpuKind = (typeof CPU_KINDS)[number];

/** CPU seconds per kind, and the machine's busy and total CPU seconds, at one instant. */
export interface CpuReading {
  byKind: Record<CpuKind, number>;
  machineBusy: number;
  machineTotal: number;
}

/** What a stretch of work cost: CPU ms per unit of work by kind, and how busy the machine was. */
export interface CpuCost {
  msPerUnit: Record<CpuKind, number>;
  /** Busy share of every core over the stretch (1 = all cores saturated). */
  busy: number;
}

const TICKS = 100; // USER_HZ on Linux

/**
 * Reads `/proc` for the CPU used so far by the stack's processes (those below `supervisorPid`,
 * by command line), every Postgres backend on the machine, the yardstick's worker and the bench
 * itself. The supervisor runs the simulator, so its own time is the simulator's. The bench is
 * the yardstick's Temporal client (its update-with-start and signal: the calls galang's API and
 * webhook route make) in yardstick rounds, and the donors' HTTP client in galang rounds.
 */
export function readCpu(
  supervisorPid: number,
  yardstickPid?: number,
  benchPid = process.pid,
): CpuReading {
  const byKind = Object.fromEntries(CPU_KINDS.map((k) => [k, 0])) as Record<CpuKind, number>;
  const all = processes();
  const below = descendants(supervisorPid, all);
  for (const [pid, stat] of all) {
    const seconds = (stat.utime + stat.stime) / TICKS;
    if (stat.comm === 'postgres') {
      // Backends come and go: the postmaster's reaped-children time keeps what ended ones used.
      const postmaster = all.get(stat.ppid)?.comm !== 'postgres';
      byKind.postgres += seconds + (postmaster ? (stat.cutime + stat.cstime) / TICKS : 0);
    } else if (pid === yardstickPid) byKind.yardstick += seconds;
    else if (pid === benchPid) byKind.bench += seconds;
    else if (below.has(pid)) byKind[kindOf(pid)] += seconds;
  }
  const [, ...fields] = (readOrEmpty('/proc/stat').split('\n')[0] ?? '').trim().split(/\s+/);
  const ticks = fields.slice(0, 8).map(Number);
  const total = ticks.reduce((a, b) => a + b, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { byKind, machineBusy: (total - idle) / TICKS, machineTotal: total / TICKS };
}

/** The cost between two readings, per unit of work (donations, or yardstick workflows). */
export function costBetween(before: CpuReading, after: CpuReading, units: number): CpuCost {
  const n = Math.max(1, units);
  const msPerUnit = Object.fromEntries(
    CPU_KINDS.map((k) => [k, ((after.byKind[k] - before.byKind[k]) * 1000) / n]),
  ) as Record<CpuKind, number>;
  const total = after.machineTotal - before.machineTotal;
  return { msPerUnit, busy: total > 0 ? (after.machineBusy - before.machineBusy) / total : 0 };
}

function kindOf(pid: number): CpuKind {
  const cmdline = readOrEmpty(`/proc/${pid}/cmdline`).replaceAll('\0', ' ');
  if (cmdline.includes('server start-dev')) return 'temporal';
  if (cmdline.includes('entry/worker')) {
    // npm start's receipts process: the worker entry told to poll the receipts' queue only.
    const environ = readOrEmpty(`/proc/${pid}/environ`).split('\0');
    return environ.includes('WORKER_TASK_QUEUES=receipts') ? 'receipts' : 'worker';
  }
  if (cmdline.includes('entry/api')) return 'api';
  return 'simulator';
}

interface ProcStat {
  comm: string;
  ppid: number;
  utime: number;
  stime: number;
  cutime: number;
  cstime: number;
}

function processes(): Map<number, ProcStat> {
  const found = new Map<number, ProcStat>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const stat = readOrEmpty(`/proc/${pid}/stat`);
    const open = stat.indexOf('(');
    const close = stat.lastIndexOf(')');
    if (open < 0 || close < 0) continue;
    const fields = stat.slice(close + 2).split(' ');
    found.set(pid, {
      comm: stat.slice(open + 1, close),
      ppid: Number(fields[1]),
      utime: Number(fields[11]),
      stime: Number(fields[12]),
      cutime: Number(fields[13]),
      cstime: Number(fields[14]),
    });
  }
  return found;
}

function descendants(root: number, all: Map<number, ProcStat>): Set<number> {
  const found = new Set([root]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, stat] of all) {
      if (!found.has(pid) && found.has(stat.ppid)) {
        found.add(pid);
        grew = true;
      }
    }
  }
  return found;
}

function readOrEmpty(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
