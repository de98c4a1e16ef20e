import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * What reconciliation did, kept for operators and for `/metrics`: one row per run, and one row
 * per campaign total it repaired (the values before and after, so a repair can be audited and,
 * if it was ever wrong, undone by hand).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('reconciliation_runs')
    // Temporal's run ID of the reconciliation workflow: a retried activity records it once.
    .addColumn('run_id', 'text', (c) => c.primaryKey())
    .addColumn('workflow_id', 'text', (c) => c.notNull())
    .addColumn('campaigns_checked', 'integer', (c) => c.notNull())
    .addColumn('drift_campaigns', 'integer', (c) => c.notNull())
    .addColumn('repaired', 'integer', (c) => c.notNull())
    .addColumn('stuck_restarted', 'integer', (c) => c.notNull())
    .addColumn('inbox_redelivered', 'integer', (c) => c.notNull())
    .addColumn('finished_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('reconciliation_runs_finished')
    .on('reconciliation_runs')
    .column('finished_at')
    .execute();

  await db.schema
    .createTable('reconciliation_repairs')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('campaign_id', 'text', (c) => c.notNull().references('campaigns.id'))
    .addColumn('before_amount', 'bigint', (c) => c.notNull())
    .addColumn('before_count', 'integer', (c) => c.notNull())
    .addColumn('before_version', 'bigint', (c) => c.notNull())
    .addColumn('after_amount', 'bigint', (c) => c.notNull())
    .addColumn('after_count', 'integer', (c) => c.notNull())
    .addColumn('after_version', 'bigint', (c) => c.notNull())
    .addColumn('repaired_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('reconciliation_repairs_once_per_run', ['run_id', 'campaign_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('reconciliation_repairs').ifExists().execute();
  await db.schema.dropTable('reconciliation_runs').ifExists().execute();
}
