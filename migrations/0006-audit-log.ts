import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Who did what as an operator (src/audit/): `audit_log`, one row written before each action,
 * and `audit_outcomes`, at most one row per action saying how it ended (none: the process
 * stopped first). Both are append-only, enforced by triggers that refuse UPDATE, DELETE and
 * TRUNCATE for every role: galang's own role owns these tables (it migrates them) and in
 * development is a superuser, and neither is bound by revoked privileges, while a trigger
 * binds both. Getting past it takes DDL (`ALTER TABLE … DISABLE TRIGGER`), which no code path
 * of galang issues. Rows hold ids and counts only: never a secret, payload or donor data.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('audit_log')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // The key id that authenticated (never its secret), or the CLI's user.
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('actor_kind', 'text', (c) =>
      c.notNull().check(sql`actor_kind IN ('operator', 'codec', 'cli', 'anonymous')`),
    )
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('donation_id', 'text')
    .addColumn('workflow_id', 'text')
    .addColumn('campaign_id', 'text')
    .addColumn('payload_count', 'integer')
    // Small facts of the action (an amount, a reset point, a limit): never free text.
    .addColumn('detail', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('origin', 'text', (c) => c.notNull().check(sql`origin IN ('http', 'cli')`))
    .addColumn('request_id', 'text')
    // The caller's address (HTTP) or the host the CLI ran on.
    .addColumn('address', 'text')
    .execute();
  await db.schema.createIndex('audit_log_at').on('audit_log').column('at').execute();

  await db.schema
    .createTable('audit_outcomes')
    .addColumn('audit_id', 'bigint', (c) => c.primaryKey().references('audit_log.id'))
    .addColumn('outcome', 'text', (c) => c.notNull().check(sql`outcome IN ('succeeded', 'failed')`))
    // The HTTP status, or the CLI's exit code.
    .addColumn('status', 'integer', (c) => c.notNull())
    // The problem code or the failure's message, when it failed.
    .addColumn('error', 'text')
    .addColumn('at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await sql`
    CREATE FUNCTION audit_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION '% is append-only: % refused', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'insufficient_privilege';
    END
    $$
  `.execute(db);
  for (const table of ['audit_log', 'audit_outcomes']) {
    await sql`
      CREATE TRIGGER ${sql.id(`${table}_append_only`)}
      BEFORE UPDATE OR DELETE ON ${sql.table(table)}
      FOR EACH ROW EXECUTE FUNCTION audit_refuse_change()
    `.execute(db);
    await sql`
      CREATE TRIGGER ${sql.id(`${table}_no_truncate`)}
      BEFORE TRUNCATE ON ${sql.table(table)}
      FOR EACH STATEMENT EXECUTE FUNCTION audit_refuse_change()
    `.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('audit_outcomes').ifExists().execute();
  await db.schema.dropTable('audit_log').ifExists().execute();
  await sql`DROP FUNCTION IF EXISTS audit_refuse_change()`.execute(db);
}
