import pg from 'pg';
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';

/**
 * Postgres could not be reached, no pooled connection came free in time, or the connection
 * dropped under a query: the request was not wrong, it may be retried (503). pg raises these as
 * plain `Error`s with no code, so the pool names them here, where it is built.
 */
export class DatabaseUnavailableError extends Error {
  override readonly name = 'DatabaseUnavailableError';
}

/** A pooled client whose query fails as {@link DatabaseUnavailableError} once its connection is lost. */
class GuardedClient implements PostgresPoolClient {
  constructor(
    private readonly client: PostgresPoolClient,
    private readonly isLost: () => boolean,
  ) {}

  query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
  query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  query<R>(
    input: string | PostgresCursor<R>,
    parameters?: ReadonlyArray<unknown>,
  ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    if (typeof input !== 'string') return this.client.query(input);
    return this.client.query<R>(input, parameters ?? []).catch((error: unknown) => {
      // A server's answer is a DatabaseError with its SQLSTATE; anything else on a lost
      // connection is the connection.
      if (error instanceof pg.DatabaseError || !this.isLost()) throw error;
      throw new DatabaseUnavailableError('The Postgres connection was lost', { cause: error });
    });
  }

  release(destroy?: boolean): void {
    this.client.release(destroy);
  }
}

/** The pool as Kysely sees it, with its connection failures named. */
export function guardedPool(pool: pg.Pool): PostgresPool {
  const lost = new WeakSet<pg.PoolClient>();
  // A client losing its connection must not crash the process: idle ones report through the
  // pool, checked-out ones through their own 'error' event (the query in flight fails anyway,
  // and the pool replaces the client).
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', () => lost.add(client));
  });
  return {
    async connect() {
      const client = await pool.connect().catch((error: unknown) => {
        throw new DatabaseUnavailableError('No Postgres connection', { cause: error });
      });
      return new GuardedClient(client, () => lost.has(client));
    },
    end: () => pool.end(),
  };
}
