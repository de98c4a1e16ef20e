import Fastify from 'fastify';
import { runBackgroundLoops } from '../../src/runtime/background-loops';

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `done` holds, however loaded the machine is; Jest's timeout bounds the wait. */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await tick(5);
}

describe('background loops', () => {
  it('run from ready to close, one run at a time, and close waits for the run in progress', async () => {
    const app = Fastify();
    let started = 0;
    let running = 0;
    let overlapped = false;
    let finished = 0;
    let release: () => void = () => undefined;
    runBackgroundLoops(app, () => true, [
      {
        name: 'slow',
        intervalMs: 5,
        async run() {
          started++;
          running++;
          overlapped ||= running > 1;
          await new Promise<void>((resolve) => {
            release = resolve;
          });
          running--;
          finished++;
        },
      },
    ]);
    await tick(30);
    expect(started).toBe(0);

    await app.ready();
    await until(() => started > 0);
    await tick(30);
    expect(started).toBe(1);

    const closed = app.close();
    await tick(30);
    expect(finished).toBe(0);
    release();
    await closed;
    expect(finished).toBe(1);
    await tick(30);
    expect({ started, overlapped }).toEqual({ started: 1, overlapped: false });
  });

  it('logs a failed run and keeps running', async () => {
    const lines: string[] = [];
    const app = Fastify({
      logger: { level: 'warn', stream: { write: (line: string) => lines.push(line) } },
    });
    let runs = 0;
    runBackgroundLoops(app, () => true, [
      {
        name: 'flaky',
        intervalMs: 5,
        async run() {
          runs++;
          throw new Error('boom');
        },
      },
    ]);
    await app.ready();
    await until(() => runs > 1);
    await app.close();
    expect(runs).toBeGreaterThan(1);
    expect(lines.some((line) => line.includes('flaky failed') && line.includes('boom'))).toBe(true);
  });
});
