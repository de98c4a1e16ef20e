import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import drainOnClose from '../../src/http/drain-on-close';

describe('closing the app', () => {
  it('tells a client whose request was in flight to drop its keep-alive connection', async () => {
    const app = Fastify();
    await app.register(drainOnClose);
    let entered: () => void = () => undefined;
    const inHandler = new Promise<void>((resolve) => {
      entered = resolve;
    });
    let release: () => void = () => undefined;
    app.get('/slow', async () => {
      entered();
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      return { ok: true };
    });
    app.get('/fast', async () => ({ ok: true }));
    let closing: () => void = () => undefined;
    const closeBegan = new Promise<void>((resolve) => {
      closing = resolve;
    });
    app.addHook('preClose', async () => {
      closing();
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    const agent = new http.Agent({ keepAlive: true });
    const get = (path: string) =>
      new Promise<http.IncomingMessage>((resolve, reject) => {
        http.get({ host: '127.0.0.1', port, path, agent }, resolve).on('error', reject);
      });

    try {
      // Before the close, answers keep the connection open as usual.
      const before = await get('/fast');
      before.resume();
      expect(before.headers.connection).toBe('keep-alive');

      const answer = get('/slow');
      await inHandler;
      const closed = app.close();
      await closeBegan;
      release();
      const response = await answer;
      expect(response.headers.connection).toBe('close');
      const socketClosed = new Promise((resolve) => response.socket.once('close', resolve));
      response.resume();
      await socketClosed;
      // With the agent still holding its connections open, the close completes.
      await closed;
    } finally {
      agent.destroy();
      await app.close();
    }
  });
});
