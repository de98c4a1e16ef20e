import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/** Each campaign's shards, summed: the view readers see, and the table a rollback restores. */
const SUMS = sql`
  SELECT campaign_id,
         sum(confirmed_amount)::bigint AS confirmed_amount,
         sum(donation_count)::integer AS donation_count,
         sum(version)::bigint AS version,
         max(updated_at) AS updated_at
  FROM campaign_total_shards
  GROUP BY campaign_id
`;

/**
 * A campaign's total is kept in shards, one picked per donation, so the confirmations of one hot
 * campaign no longer queue on one row (docs/scaling.md, "The first wall"). `campaign_totals`
 * becomes the view of their sums: readers see what they saw before.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('campaign_total_shards')
    .addColumn('campaign_id', 'text', (c) => c.notNull().references('campaigns.id'))
    .addColumn('shard', 'smallint', (c) => c.notNull())
    .addColumn('confirmed_amount', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('donation_count', 'integer', (c) => c.notNull().defaultTo(0))
    // Bumped on every change; the view's sum of them orders cache rebuilds as before.
    .addColumn('version', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('campaign_total_shards_pk', ['campaign_id', 'shard'])
    .execute();
  await sql`
    INSERT INTO campaign_total_shards (campaign_id, shard, confirmed_amount, donation_count, version, updated_at)
    SELECT campaign_id, 0, confirmed_amount, donation_count, version, updated_at FROM campaign_totals
  `.execute(db);
  await db.schema.dropTable('campaign_totals').execute();
  await sql`CREATE VIEW campaign_totals AS ${SUMS}`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP VIEW campaign_totals`.execute(db);
  await sql`CREATE TABLE campaign_totals AS ${SUMS}`.execute(db);
  await sql`ALTER TABLE campaign_totals ADD PRIMARY KEY (campaign_id)`.execute(db);
  await db.schema.dropTable('campaign_total_shards').execute();
}
