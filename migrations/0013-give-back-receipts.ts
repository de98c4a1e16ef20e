import { sql } from 'kysely';
import type { Kysely } from 'kysely';

const WITH_GIVE_BACKS = sql.raw(
  `'DONATION', 'REFUND', 'CHARGEBACK', 'REFUND_REVERSAL', 'CHARGEBACK_REVERSAL'`,
);
const WITHOUT_GIVE_BACKS = sql.raw(`'DONATION', 'REFUND', 'CHARGEBACK'`);

/**
 * A give-back (a refund that failed after it succeeded, a dispute won) puts money back in the
 * campaign; its donor held a credit note saying it left. It now gets a receipt of its own that
 * reverses that credit note (docs/receipts-and-privacy.md). Give-backs posted before this
 * migration are numbered too, but not mailed, like the entries 0009 found.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await queueOn(db, WITH_GIVE_BACKS);
  await sql`
    INSERT INTO receipt_queue (ledger_entry_id, mail)
    SELECT l.id, false FROM donation_ledger l
     WHERE l.entry_type IN ('REFUND_REVERSAL', 'CHARGEBACK_REVERSAL')
       AND NOT EXISTS (SELECT 1 FROM receipts r WHERE r.ledger_entry_id = l.id)
    ON CONFLICT (ledger_entry_id) DO NOTHING
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await queueOn(db, WITHOUT_GIVE_BACKS);
  await sql`
    DELETE FROM receipt_queue q USING donation_ledger l
     WHERE l.id = q.ledger_entry_id
       AND l.entry_type IN ('REFUND_REVERSAL', 'CHARGEBACK_REVERSAL')
  `.execute(db);
}

/** The trigger that queues a ledger entry for its document, for these entry types. */
async function queueOn(db: Kysely<unknown>, types: ReturnType<typeof sql.raw>): Promise<void> {
  await sql`DROP TRIGGER IF EXISTS donation_ledger_receipt ON donation_ledger`.execute(db);
  await sql`
    CREATE TRIGGER donation_ledger_receipt AFTER INSERT ON donation_ledger
    FOR EACH ROW WHEN (NEW.entry_type IN (${types}))
    EXECUTE FUNCTION receipt_enqueue()
  `.execute(db);
}
