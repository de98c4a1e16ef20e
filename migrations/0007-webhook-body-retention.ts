import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * A webhook's raw body holds payer data (names, e-mail addresses, card and account details)
 * that galang never needs once the event is parsed: reconciliation purges it after
 * `WEBHOOK_BODY_RETENTION_DAYS`, keeping the parsed event (`payload`) and the row's keys. A
 * purged row has `raw_body` NULL and `body_purged_at` set; the partial index holds only rows
 * whose body is kept, by age, so each purge reads exactly what it purges. Runs record how many.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('webhook_inbox')
    .alterColumn('raw_body', (c) => c.dropNotNull())
    .execute();
  await db.schema.alterTable('webhook_inbox').addColumn('body_purged_at', 'timestamptz').execute();
  await db.schema
    .createIndex('webhook_inbox_body_kept')
    .on('webhook_inbox')
    .columns(['received_at', 'id'])
    .where(sql.ref('body_purged_at'), 'is', null)
    .execute();
  await db.schema
    .alterTable('reconciliation_runs')
    .addColumn('bodies_purged', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('reconciliation_runs').dropColumn('bodies_purged').execute();
  await db.schema.dropIndex('webhook_inbox_body_kept').execute();
  await db.schema.alterTable('webhook_inbox').dropColumn('body_purged_at').execute();
  // A purged body cannot come back: those rows get an empty one, so the column can be NOT NULL.
  await sql`UPDATE webhook_inbox SET raw_body = '' WHERE raw_body IS NULL`.execute(db);
  await db.schema
    .alterTable('webhook_inbox')
    .alterColumn('raw_body', (c) => c.setNotNull())
    .execute();
}
