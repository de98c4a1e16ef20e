import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { guardedPool } from './database-unavailable';
import type { Database } from './schema';

/**
 * BIGINT columns hold money in minor units. They are parsed to numbers, which is exact below
 * 2^53; a value beyond that is refused loudly instead of being rounded silently.
 */
function parseInt8(value: string): number {
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed)) throw new RangeError(`BIGINT ${value} exceeds 2^53`);
  return parsed;
}

function int8AsNumber(): pg.TypeOverrides {
  const overrides = new pg.TypeOverrides();
  overrides.setTypeParser(pg.types.builtins.INT8, parseInt8);
  return overrides;
}

export interface DatabaseOptions {
  connectionString: string;
  /** Pool size; the API and the worker size theirs separately. */
  max?: number;
  /** Fail fast instead of queueing forever when Postgres is gone. */
  connectionTimeoutMillis?: number;
}

export type Db = Kysely<Database>;

export function createDatabase(options: DatabaseOptions): Db {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    connectionTimeoutMillis: options.connectionTimeoutMillis ?? 5_000,
    types: int8AsNumber(),
  });
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool: guardedPool(pool) }) });
}
