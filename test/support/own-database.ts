import pg from 'pg';
import { createDatabase } from '../../src/db/database';
import { migrateToLatest } from '../../src/db/migrate';
import { testState } from './test-env';

export interface OwnDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A database of one test file's own, migrated from scratch. For tests whose results are
 * database-wide (reconciliation repairs and counts every campaign): on the shared database,
 * another file's reconciliation could repair their drift first.
 */
export async function createOwnDatabase(label: string): Promise<OwnDatabase> {
  const state = testState();
  const name = `${state.database}_${label}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: state.adminUrl });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  const url = new URL(state.adminUrl);
  url.pathname = `/${name}`;
  const db = createDatabase({ connectionString: url.toString(), max: 1 });
  try {
    await migrateToLatest(db);
  } finally {
    await db.destroy();
  }
  return {
    url: url.toString(),
    drop: () => admin(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`),
  };
}
