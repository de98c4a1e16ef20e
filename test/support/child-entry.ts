import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';

const root = path.resolve(__dirname, '../..');

export interface ChildEntry {
  child: ChildProcess;
  /** The first stdout line that matched `ready`. */
  readyLine: string;
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
  const readyLine = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`${entry} did not start: ${stderr.join('')}`));
    }, 60_000);
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      if (ready(line)) {
        clearTimeout(timer);
        resolve(line);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${entry} exited with ${code}: ${stderr.join('')}`));
    });
  });
  return {
    child,
    readyLine,
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
