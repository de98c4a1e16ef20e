import type { Logger } from 'pino';

/**
 * How long an API process may go without its event loop beating before the primary kills it
 * (and so replaces it): a process blocked for good (in a lock) answers nothing, not even /healthz.
 */
export const STUCK_AFTER_MS = 20_000;
const HEARTBEAT_MS = 1_000;
export const HEARTBEAT = 'galang:heartbeat';

/** The part of a cluster worker that the watchdog uses. */
export interface BeatingProcess {
  on(event: 'message', listener: (message: unknown) => void): unknown;
  process: { pid?: number | undefined; kill(signal: NodeJS.Signals): boolean };
}

/** In an API process of the cluster: tells the primary, every second, that its loop runs. */
export function beatForPrimary(): void {
  setInterval(() => {
    if (process.connected) process.send?.(HEARTBEAT);
  }, HEARTBEAT_MS).unref();
}

/**
 * In the primary: SIGKILLs `worker` once it has not beaten for `stuckAfterMs` (counted from now
 * for one that never beat). Returns what stops the watch, for when the worker exits.
 */
export function watchHeartbeats(
  worker: BeatingProcess,
  log: Pick<Logger, 'error'>,
  stuckAfterMs = STUCK_AFTER_MS,
): () => void {
  let lastBeat = Date.now();
  worker.on('message', (message) => {
    if (message === HEARTBEAT) lastBeat = Date.now();
  });
  const watchdog = setInterval(() => {
    if (Date.now() - lastBeat < stuckAfterMs) return;
    clearInterval(watchdog);
    log.error(
      { pid: worker.process.pid, silentMs: Date.now() - lastBeat },
      'api process stuck; killing it',
    );
    worker.process.kill('SIGKILL');
  }, HEARTBEAT_MS);
  watchdog.unref();
  return () => {
    clearInterval(watchdog);
  };
}
