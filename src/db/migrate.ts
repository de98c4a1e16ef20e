import { Migrator } from 'kysely';
import type { MigrationResultSet } from 'kysely';
import pg from 'pg';
import { migrations } from '../../migrations';
import type { Db } from './database';

/** Applies every pending migration; Kysely's Migrator holds an advisory lock, so racing is safe. */
export async function migrateToLatest(db: Db): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(migrations) },
  });
  const result = await migrator.migrateToLatest();
  if (result.error) {
    throw result.error instanceof Error
      ? result.error
      : new Error('Migration failed', { cause: result.error });
  }
  return result;
}

/** duplicate_database, and unique_violation on pg_database (two CREATE DATABASE at once). */
const DATABASE_EXISTS_CODES = new Set(['42P04', '23505']);

/**
 * Creates the database named in the URL when it does not exist yet, through the server's
 * `postgres` maintenance database, so a fresh machine needs no manual `createdb`.
 */
export async function ensureDatabase(connectionString: string): Promise<boolean> {
  const url = new URL(connectionString);
  const name = decodeURIComponent(url.pathname.slice(1));
  if (!name) throw new Error('DATABASE_URL names no database');
  url.pathname = '/postgres';
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return false;
    try {
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    } catch (error) {
      // Another process created it between our check and our CREATE: 42P04 once it committed,
      // 23505 (pg_database's unique index) while its CREATE was still running beside ours.
      if (!DATABASE_EXISTS_CODES.has((error as { code?: string }).code ?? '')) throw error;
      return false;
    }
    return true;
  } finally {
    await client.end();
  }
}
