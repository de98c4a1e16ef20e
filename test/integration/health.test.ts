import { TcpProxy } from '../support/tcp-proxy';
import { startStack } from '../support/stack';
import { testState } from '../support/test-env';

describe('health and readiness', () => {
  it('reports each dependency, and a stopped one makes the API unready', async () => {
    const proxy = await TcpProxy.start('127.0.0.1:5432');
    const url = new URL(testState().databaseUrl);
    url.port = String(proxy.port);
    const stack = await startStack({ apiDatabaseUrl: url.toString() });
    try {
      const readyz = () => stack.app.inject({ method: 'GET', url: '/readyz' });
      expect((await stack.app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({
        status: 'ok',
      });
      const ready = await readyz();
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toEqual({
        status: 'ready',
        checks: { postgres: 'up', redis: 'up', temporal: 'up', lmdb: 'up' },
      });

      proxy.set('refuse');
      const unready = await readyz();
      expect(unready.statusCode).toBe(503);
      expect(unready.json()).toEqual({
        status: 'unready',
        checks: { postgres: 'down', redis: 'up', temporal: 'up', lmdb: 'up' },
      });
      // Liveness does not depend on dependencies: restarting would not bring Postgres back.
      expect((await stack.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);

      proxy.set('pass');
      expect((await readyz()).statusCode).toBe(200);
    } finally {
      await stack.stop();
      await proxy.close();
    }
  });
});
