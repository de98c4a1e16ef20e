import pino from 'pino';
import { startWorkerProcesses } from '../../src/runtime/worker-processes';
import { eventually, startStack } from '../support/stack';
import type { Stack } from '../support/stack';
import { workerEnv } from '../support/worker-process';

/**
 * Ctrl-C reaches every process of the terminal's group, so `npm start`'s worker processes stop
 * on their own SIGINT, often before their supervisor's turn to stop them comes: a worker that
 * stopped on request is not a worker that died, and is not replaced.
 */
describe('worker processes stopping', () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ noWorker: true });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('are not replaced, nor reported dead, when they stop on SIGINT', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => lines.push(line) });
    const workers = await startWorkerProcesses(1, 0, log, {
      PATH: process.env.PATH,
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      ...workerEnv(stack),
    });
    try {
      // The donations' process and the receipts' one; Ctrl-C signals each of them.
      const started = workers.pids();
      expect(started).toHaveLength(2);
      // Never 0: that would signal the test runner's whole process group.
      for (const pid of started) process.kill(pid, 'SIGINT');
      // A replacement is forked in the same exit handler that forgets the stopped one.
      const after = await eventually(async () => {
        const pids = workers.pids();
        return pids.some((pid) => started.includes(pid)) ? undefined : pids;
      }, 60_000);
      expect(after).toEqual([]);
      expect(lines.join('')).not.toContain('worker process died');
    } finally {
      await workers.stop();
    }
  }, 120_000);
});
