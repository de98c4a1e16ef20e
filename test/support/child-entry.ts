import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

const root = path.resolve(__dirname, '../..');

export interface ChildEntry {
  child: ChildProcess;
  /** The first stdout line that matched `ready`. */
  readyLine: string;
  /** Every stdout line so far. */
  lines: string[];
  /** Resolves with the first stdout line, past or future, that matches. */
  line(matches: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Its stderr so far. */
  stderr(): string;
  /** SIGKILL: no cleanup, no release, no flush; what a crash looks like. */
  kill9(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Runs one of the real entry points (`src/entry/*.ts`) as a child process with only the given
 * environment, and resolves once a stdout line matches `ready`.
 */
export async function spawnEntry(
  entry: string,
  env: Record<string, string>,
  ready: (line: string) => boolean,
): Promise<ChildEntry> {
  const child = spawn(process.execPath, ['--import', 'tsx', `src/entry/${entry}.ts`], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      resolve();
    });
  });
  const stderr: string[] = [];
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
  const lines: string[] = [];
  const reader = readline.createInterface({ input: child.stdout });
  reader.on('line', (line) => lines.push(line));
  const line = (matches: (line: string) => boolean, timeoutMs = 60_000) =>
    new Promise<string>((resolve, reject) => {
      const seen = lines.find(matches);
      if (seen !== undefined) {
        resolve(seen);
        return;
      }
      const onLine = (next: string) => {
        if (!matches(next)) return;
        done();
        resolve(next);
      };
      const onExit = (code: number | null) => {
        done();
        reject(new Error(`${entry} exited with ${code}: ${stderr.join('')}`));
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`${entry}: no such line in time; stderr: ${stderr.join('')}`));
      }, timeoutMs);
      const done = () => {
        clearTimeout(timer);
        reader.off('line', onLine);
        child.off('exit', onExit);
      };
      reader.on('line', onLine);
      child.once('exit', onExit);
    });
  const readyLine = await line(ready);
  return {
    child,
    readyLine,
    lines,
    line,
    stderr: () => stderr.join(''),
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

/**
 * Runs an entry point with only `env` until it exits, for a boot that must be refused; one
 * still running after `timeoutMs` is killed and reported with code null.
 */
export function runUntilExit(
  entry: string,
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', `src/entry/${entry}.ts`], {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
    }, timeoutMs);
    // 'close', not 'exit': at 'exit' the child's stderr may still hold unread data.
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}
