import { sql } from 'kysely';
import { createDatabase } from '../../src/db/database';
import { isTransientInfrastructureError } from '../../src/errors/transient';
import { TcpProxy } from '../support/tcp-proxy';
import { testState } from '../support/test-env';

/**
 * pg raises a pool checkout timeout and a connection dropped under a query as plain errors with
 * no code; the pool names them so the edge answers 503 and a client retries, never 500.
 */
describe('Postgres going away is transient, whatever pg calls it', () => {
  it('counts a pool checkout that timed out', async () => {
    const db = createDatabase({
      connectionString: testState().databaseUrl,
      max: 1,
      connectionTimeoutMillis: 200,
    });
    try {
      const held = db.transaction().execute(() => sql`select pg_sleep(1)`.execute(db));
      const error = await sql`select 1`.execute(db).catch((e: unknown) => e);
      expect(isTransientInfrastructureError(error)).toBe(true);
      await held.catch(() => undefined);
    } finally {
      await db.destroy();
    }
  });

  it('counts a connection dropped under a query, not a broken constraint', async () => {
    const proxy = await TcpProxy.start(new URL(testState().databaseUrl).host);
    const url = new URL(testState().databaseUrl);
    url.port = String(proxy.port);
    const db = createDatabase({ connectionString: url.toString(), max: 1 });
    try {
      const refused = await sql`select 1 / 0`.execute(db).catch((e: unknown) => e);
      expect(isTransientInfrastructureError(refused)).toBe(false);
      const query = sql`select pg_sleep(5)`.execute(db).catch((e: unknown) => e);
      await new Promise((resolve) => setTimeout(resolve, 200));
      proxy.set('refuse');
      expect(isTransientInfrastructureError(await query)).toBe(true);
    } finally {
      await db.destroy();
      await proxy.close();
    }
  });
});
