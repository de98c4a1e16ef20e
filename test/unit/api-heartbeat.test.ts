import { spawn } from 'node:child_process';
import { HEARTBEAT, watchHeartbeats } from '../../src/runtime/api-heartbeat';

/**
 * A child that beats like an API process and, after `blockAfterMs`, blocks its main thread in a
 * futex for good (Atomics.wait), as API processes did in lmdb-js's lock after a full disk.
 */
function beatingChild(blockAfterMs: number) {
  const code = `
    // -2: a process still loading its modules: it never beats, then blocks.
    const beat = setInterval(() => {
      if (${String(blockAfterMs)} !== -2) process.send(${JSON.stringify(HEARTBEAT)});
    }, 200);
    setTimeout(() => {
      if (${String(blockAfterMs)} === -1) return;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    }, Math.max(0, ${String(blockAfterMs)}));
    setTimeout(() => { clearInterval(beat); process.disconnect(); }, 8000);
  `;
  const child = spawn(process.execPath, ['-e', code], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => {
    child.once('exit', (_code, signal) => {
      resolve(signal);
    });
  });
  return { child, exited };
}

describe('the API primary watching its processes beat', () => {
  const log = { error: jest.fn() };

  it('kills a process whose main thread stopped beating, blocked in a futex', async () => {
    const { child, exited } = beatingChild(1_000);
    const started = Date.now();
    const unwatch = watchHeartbeats({ on: child.on.bind(child), process: child }, log, 2_000);
    try {
      expect(await exited).toBe('SIGKILL');
      expect(Date.now() - started).toBeGreaterThanOrEqual(2_500);
      expect(log.error).toHaveBeenCalledWith(
        expect.objectContaining({ pid: child.pid }),
        'api process stuck; killing it',
      );
    } finally {
      unwatch();
    }
  }, 15_000);

  it('gives a process that has not beaten yet its start-up grace, then kills it', async () => {
    const { child, exited } = beatingChild(-2);
    const started = Date.now();
    const unwatch = watchHeartbeats(
      { on: child.on.bind(child), process: child },
      log,
      1_000,
      3_000,
    );
    try {
      expect(await exited).toBe('SIGKILL');
      expect(Date.now() - started).toBeGreaterThanOrEqual(3_000);
    } finally {
      unwatch();
    }
  }, 15_000);

  it('leaves a process alone while it beats', async () => {
    const { child, exited } = beatingChild(-1);
    const unwatch = watchHeartbeats({ on: child.on.bind(child), process: child }, log, 2_000);
    try {
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      expect(child.exitCode).toBeNull();
      expect(child.signalCode).toBeNull();
    } finally {
      unwatch();
      child.kill('SIGKILL');
      await exited;
    }
  }, 15_000);
});
