import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { devServerLog, startDevServer, stopDevServer } from '../../src/temporal/dev-server';
import { freePort } from '../support/free-port';

/** Holds a port as another process on a busy machine would, until released. */
function holdPort(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      resolve(server);
    });
  });
}

describe('starting the Temporal dev server', () => {
  it('starts it again when it exits because a port it binds was taken meanwhile', async () => {
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'galang-dev-start-'));
    const port = await freePort();
    const uiPort = await freePort();
    const blocker = await holdPort(uiPort);
    const log = devServerLog(stateDir, port);
    // Release the port once the first server has given up on it, as a leaving process would.
    const released = (async () => {
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        if (existsSync(log) && /address already in use/.test(readFileSync(log, 'utf8'))) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await new Promise<void>((resolve) =>
        blocker.close(() => {
          resolve();
        }),
      );
    })();
    try {
      const server = await startDevServer({ port, uiPort, stateDir });
      expect(server.address).toBe(`127.0.0.1:${port}`);
      expect(readFileSync(log, 'utf8')).toMatch(/address already in use/);
    } finally {
      await released;
      await stopDevServer(stateDir, port);
    }
  }, 120_000);
});
