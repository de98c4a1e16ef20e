import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { sleep, waitFor } from './commands';
import type { Log } from './commands';

export interface ProcessSpec {
  name: string;
  command: string;
  args: readonly string[];
  env: Record<string, string>;
  cwd?: string;
  /** stdout and stderr go here, appended across restarts. */
  logFile: string;
  /**
   * Resolves once the process serves: a probe, or a line it prints (`line(pattern)` resolves
   * with the first line of stdout that matches). Start waits for it.
   */
  ready: (line: (pattern: RegExp) => Promise<string>) => Promise<void>;
  readyTimeoutMs?: number;
}

/**
 * One long-running process under supervision, as systemd's `Restart=always` or compose's
 * `restart: unless-stopped` keeps it: started in a process group of its own, restarted with
 * backoff whenever it exits unasked (a crash, a kill -9), until {@link Supervised.stop}.
 */
export class Supervised {
  private child: ChildProcess | undefined;
  private stopping = false;
  private readonly log: WriteStream;
  /** Exits the supervisor did not ask for, each answered with a restart. */
  restarts = 0;

  constructor(
    readonly spec: ProcessSpec,
    private readonly say: Log,
  ) {
    this.log = createWriteStream(spec.logFile, { flags: 'a' });
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the process and waits until it is ready. */
  async start(): Promise<void> {
    this.stopping = false;
    const child = spawn(this.spec.command, this.spec.args, {
      cwd: this.spec.cwd,
      env: this.spec.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    let ready = false;
    const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
    let partial = '';
    child.stdout.on('data', (chunk: Buffer) => {
      this.log.write(chunk);
      if (ready) return;
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        for (const waiter of waiters.filter(({ pattern }) => pattern.test(line))) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(line);
        }
      }
    });
    child.stderr.on('data', (chunk: Buffer) => this.log.write(chunk));
    const exited = new Promise<never>((_, reject) => {
      child.once('exit', (code, signal) => {
        reject(new Error(`${this.spec.name} exited (${signal ?? code}) before it was ready`));
        if (!ready || this.stopping || this.child !== child) return;
        this.restarts++;
        this.say(`${this.spec.name} exited (${signal ?? code}); restarting it`);
        void this.restartAfterCrash();
      });
    });
    exited.catch(() => undefined);
    const timeoutMs = this.spec.readyTimeoutMs ?? 120_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        this.spec.ready(
          (pattern) =>
            new Promise<string>((resolve) => {
              waiters.push({ pattern, resolve });
            }),
        ),
        exited,
        new Promise((_, reject) => {
          timer = setTimeout(() => {
            reject(
              new Error(
                `${this.spec.name} not ready within ${timeoutMs} ms (${this.spec.logFile})`,
              ),
            );
          }, timeoutMs);
        }),
      ]);
    } catch (error) {
      this.signal('SIGKILL');
      throw error;
    } finally {
      clearTimeout(timer);
    }
    ready = true;
    this.up = true;
  }

  /**
   * A signal to the whole group, unasked as far as the supervisor knows, so the process is
   * restarted once it exits: SIGKILL is a crash (no cleanup, no flush), SIGQUIT makes PostgreSQL
   * shut down at once and recover at the next start. `downForMs` holds the restart that long.
   */
  crash(signal: NodeJS.Signals = 'SIGKILL', downForMs = 0): void {
    this.downUntil = Date.now() + downForMs;
    this.signal(signal);
  }

  /** Waits until a crashed process is back and ready. */
  async running(timeoutMs = 120_000): Promise<void> {
    await waitFor(`${this.spec.name} back`, async () => (this.up ? true : undefined), timeoutMs);
  }

  /** SIGTERM, then SIGKILL after `graceMs`; no restart. */
  async stop(graceMs = 15_000): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      this.signal('SIGTERM');
      const timer = setTimeout(() => {
        this.signal('SIGKILL');
      }, graceMs);
      await exited;
      clearTimeout(timer);
    }
    // Whatever the leader left in its group (a child that outlived it) goes with it.
    this.signal('SIGKILL');
    await new Promise((resolve) => this.log.end(resolve));
  }

  /** Whether the current process got ready and has not crashed since. */
  private up = false;
  /** A crash that keeps the part down (a host that is gone a while) holds the restart until then. */
  private downUntil = 0;

  private async restartAfterCrash(): Promise<void> {
    this.up = false;
    for (let attempt = 0; ; attempt++) {
      await sleep(Math.max(Math.min(500 * 2 ** attempt, 10_000), this.downUntil - Date.now()));
      if (this.isStopping()) return;
      try {
        await this.start();
        return;
      } catch (error) {
        this.say(`${this.spec.name} did not come back: ${String(error)}`);
      }
    }
  }

  private isStopping(): boolean {
    return this.stopping;
  }

  private signal(signal: NodeJS.Signals): void {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // Already gone.
    }
  }
}

/** A ready check that waits for the first line matching `pattern`. */
export function lineMatching(pattern: RegExp): ProcessSpec['ready'] {
  return async (line) => {
    await line(pattern);
  };
}

/** A ready check that calls `probe` until it answers; the output is not read. */
export function probing(
  what: string,
  probe: () => Promise<boolean>,
  timeoutMs = 120_000,
): ProcessSpec['ready'] {
  return async () => {
    await waitFor(what, async () => ((await probe()) ? true : undefined), timeoutMs);
  };
}
