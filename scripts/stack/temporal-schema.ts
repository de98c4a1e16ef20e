import path from 'node:path';
import pg from 'pg';
import { run } from './commands';
import type { Log } from './commands';
import type { TemporalBinaries } from './temporal-build';

export interface PostgresServer {
  host: string;
  port: number;
  user: string;
}

/**
 * Temporal's two databases, set up the way its operators do with `temporal-sql-tool`: create the
 * database, lay the base schema (version 0.0) once, then apply every versioned step the module
 * ships up to this server's version. Run again, it only applies what an upgrade added.
 */
export async function setupTemporalSchema(
  binaries: TemporalBinaries,
  postgres: PostgresServer,
  databases: { main: string; visibility: string },
  log: Log,
): Promise<void> {
  const steps: [string, string][] = [
    [databases.main, 'temporal'],
    [databases.visibility, 'visibility'],
  ];
  for (const [database, schema] of steps) {
    const sql = (...args: string[]) =>
      run(binaries.sqlTool, [
        '--plugin',
        'postgres12',
        '--endpoint',
        postgres.host,
        '--port',
        String(postgres.port),
        '--user',
        postgres.user,
        '--db',
        database,
        ...args,
      ]);
    const state = await schemaState(postgres, database);
    if (state === 'absent') sql('create-database');
    if (state !== 'versioned') sql('setup-schema', '-v', '0.0');
    sql('update-schema', '-d', path.join(binaries.postgresSchemaDir, schema, 'versioned'));
    log(`Temporal ${schema} schema in database ${database} is at ${binaries.version}'s version.`);
  }
}

/** Drops Temporal's databases (the stack's teardown). */
export async function dropTemporalDatabases(
  postgres: PostgresServer,
  databases: readonly string[],
): Promise<void> {
  await withClient(postgres, 'postgres', async (client) => {
    for (const name of databases) {
      await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    }
  });
}

/** Whether the database exists, and whether the sql tool's version table is in it. */
async function schemaState(
  postgres: PostgresServer,
  database: string,
): Promise<'absent' | 'empty' | 'versioned'> {
  const exists = await withClient(postgres, 'postgres', async (client) => {
    const result = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    return result.rowCount === 1;
  });
  if (!exists) return 'absent';
  return withClient(postgres, database, async (client) => {
    const result = await client.query("SELECT to_regclass('public.schema_version') AS t");
    return (result.rows[0] as { t: string | null }).t ? 'versioned' : 'empty';
  });
}

async function withClient<T>(
  postgres: PostgresServer,
  database: string,
  use: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ ...postgres, database });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}
