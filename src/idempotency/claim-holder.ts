import { readFileSync } from 'node:fs';
import os from 'node:os';

/**
 * The process that holds a claim, as the claim records it: enough for another process of the
 * same host to tell that it is gone. The start time tells a reused pid from the holder.
 */
export interface ClaimHolder {
  host: string;
  pid: number;
  /** Clock ticks since boot when the process started (`/proc/<pid>/stat`); absent without /proc. */
  startTime?: number | undefined;
}

/** The process's start time from `/proc/<pid>/stat` (field 22), or undefined where unreadable. */
export function processStartTime(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 2 (the command) may hold spaces and parentheses: count from after its last ')'.
    const value = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    return Number.isSafeInteger(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** This process, as its claims record it. */
export function currentHolder(): ClaimHolder {
  return { host: os.hostname(), pid: process.pid, startTime: processStartTime(process.pid) };
}

/**
 * Whether the holder is known to be gone: it ran on `host` (this one) and no process with its
 * pid, or none with its pid and start time, exists there. A holder on another host, or one
 * recorded without a host, is never known to be gone: only its lease ends its claim.
 */
export function isHolderGone(holder: Partial<ClaimHolder>, host: string): boolean {
  if (!holder.host || holder.host !== host || holder.pid === undefined) return false;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    // EPERM: a process with that pid exists (another user's); only its start time can tell.
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return true;
  }
  if (holder.startTime === undefined) return false;
  const startTime = processStartTime(holder.pid);
  return startTime !== undefined && startTime !== holder.startTime;
}
