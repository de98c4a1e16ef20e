import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { ensureDatabase } from '../../src/db/migrate';
import { testState } from '../support/test-env';

/**
 * The first boot of a deployment: API processes and workers start together on a server where
 * galang's database does not exist yet, and each creates it. One creates it; the others find it
 * made, whichever error PostgreSQL reports for the collision, and none of them fails to start.
 */
describe('ensureDatabase', () => {
  const made: string[] = [];
  const admin = () => new pg.Client({ connectionString: testState().adminUrl });

  afterAll(async () => {
    const client = admin();
    await client.connect();
    for (const name of made) {
      await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    }
    await client.end();
  });

  it('creates the database once when many processes ask at the same moment', async () => {
    for (let round = 0; round < 4; round++) {
      const name = `galang_race_${randomUUID().slice(0, 8)}`;
      made.push(name);
      const url = new URL(testState().adminUrl);
      url.pathname = `/${name}`;
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, () => ensureDatabase(url.toString())),
      );
      expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
      const created = results.filter((result) => result.status === 'fulfilled' && result.value);
      expect(created).toHaveLength(1);
    }
  });
});
