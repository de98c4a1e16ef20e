import type { Logger } from 'pino';

/**
 * How long an API process may go without its event loop beating before the primary kills it
 * (and so replaces it): a process blocked for good (in a lock) answers nothing, not even /healthz.
 */
export const STUCK_AFTER_MS = 20_000;
/** Before its first beat a process is loading its modules, slowly on a loaded machine. */
export const STARTUP_GRACE_MS = 90_000;
const HEARTBEAT_MS = 1_000;
export const HEARTBEAT = 'galang:heartbeat';

/** The part of a cluster worker that the watchdog uses. */
export interface BeatingProcess {
  on(event: 'message', listener: (message: unknown) => void): unknown;
  process: { pid?: number | undefined; kill(signal: NodeJS.Signals): boolean };
}

/** In an API process of the cluster: tells the primary, every second, that its loop runs. */
export function beatForPrimary(): void {
  const beat = () => {
    if (process.connected) process.send?.(HEARTBEAT);
  };
  beat();
  setInterval(beat, HEARTBEAT_MS).unref();
}

/**
 * In the primary: SIGKILLs `worker` once it has not beaten for `stuckAfterMs`, or, before its
 * first beat, for `startupGraceMs` from now. Returns what stops the watch, for when it exits.
 */
export function watchHeartbeats(
  worker: BeatingProcess,
  log: Pick<Logger, 'error'>,
  stuckAfterMs = STUCK_AFTER_MS,
  startupGraceMs = STARTUP_GRACE_MS,
): () => void {
  let lastBeat = Date.now();
  let limit = startupGraceMs;
  worker.on('message', (message) => {
    if (message !== HEARTBEAT) return;
    lastBeat = Date.now();
    limit = stuckAfterMs;
  });
  const watchdog = setInterval(() => {
    if (Date.now() - lastBeat < limit) return;
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
