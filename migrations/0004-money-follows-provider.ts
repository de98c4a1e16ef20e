import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Each refund and dispute is its own ledger entry, keyed by the provider's id of it, so partial
 * refunds, several refunds and a dispute won back each post once. Dead-letter marks move from
 * the workflow memo (gone with retention) to the donation row, and reconciliation pages open
 * donations by id.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('donation_ledger')
    .addColumn('external_ref', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema
    .alterTable('donation_ledger')
    .dropConstraint('donation_ledger_once_per_type')
    .execute();
  await db.schema
    .alterTable('donation_ledger')
    .addUniqueConstraint('donation_ledger_once_per_ref', [
      'donation_id',
      'entry_type',
      'external_ref',
    ])
    .execute();
  await sql`ALTER TABLE donation_ledger ADD CONSTRAINT donation_ledger_entry_type CHECK (
      entry_type IN ('DONATION', 'REFUND', 'REFUND_REVERSAL', 'CHARGEBACK', 'CHARGEBACK_REVERSAL')
    )`.execute(db);

  await db.schema
    .alterTable('donations')
    .addColumn('dead_lettered_at', 'timestamptz')
    .addColumn('dead_letter_reason', 'text')
    .execute();
  await db.schema
    .createIndex('donations_open')
    .on('donations')
    .column('id')
    .where(sql.ref('status'), 'in', sql`('PENDING', 'AWAITING_PAYMENT')`)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('donations_open').execute();
  await db.schema
    .alterTable('donations')
    .dropColumn('dead_lettered_at')
    .dropColumn('dead_letter_reason')
    .execute();
  await sql`ALTER TABLE donation_ledger DROP CONSTRAINT donation_ledger_entry_type`.execute(db);
  await db.schema
    .alterTable('donation_ledger')
    .dropConstraint('donation_ledger_once_per_ref')
    .execute();
  await db.schema
    .alterTable('donation_ledger')
    .addUniqueConstraint('donation_ledger_once_per_type', ['donation_id', 'entry_type'])
    .execute();
  await db.schema.alterTable('donation_ledger').dropColumn('external_ref').execute();
}
