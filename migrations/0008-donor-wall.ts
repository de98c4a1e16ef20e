import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * The donor wall (docs/receipts-and-privacy.md). `public_name` is the name the wall shows,
 * decided when the donation is recorded and kept apart from `donor_name`, so the wall's reads
 * never select the private one; its default is "Anonymous", so a writer that forgets it leaks
 * nothing. `message_hidden_at` is an operator's hiding of the message. `hide_amounts` is the
 * campaign's choice to show no amounts. The partial index serves the wall's keyset pages.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('donations')
    .addColumn('public_name', 'text', (c) => c.notNull().defaultTo('Anonymous'))
    .addColumn('message_hidden_at', 'timestamptz')
    .execute();
  await sql`UPDATE donations SET public_name = donor_name WHERE NOT donor_anonymous`.execute(db);
  await db.schema
    .alterTable('campaigns')
    .addColumn('hide_amounts', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  await sql`
    CREATE INDEX donations_wall ON donations (campaign_id, confirmed_at DESC, id DESC)
    WHERE status IN ('CONFIRMED', 'PARTIALLY_REFUNDED')
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP INDEX IF EXISTS donations_wall`.execute(db);
  await db.schema.alterTable('campaigns').dropColumn('hide_amounts').execute();
  await db.schema
    .alterTable('donations')
    .dropColumn('message_hidden_at')
    .dropColumn('public_name')
    .execute();
}
