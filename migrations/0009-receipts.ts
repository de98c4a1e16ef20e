import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Receipts and credit notes (docs/receipts-and-privacy.md). A trigger queues every credit,
 * refund and chargeback in the ledger's own transaction, so none is missed and the confirmation
 * takes no lock of a shared row; one writer per organization takes the queue in ledger order
 * and numbers it, `UNIQUE (organization, series, year, seq)` and `UNIQUE (ledger_entry_id)`
 * holding the sequence gapless and each entry's number once. The mail queue is filled in the
 * numbering's transaction; `mail_deliveries` records what the SMTP server accepted. Entries
 * from before this migration are numbered but not mailed: no donor gets a years-old receipt.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE receipts (
      number text PRIMARY KEY,
      organization text NOT NULL,
      series text NOT NULL CHECK (series IN ('receipt', 'credit-note')),
      year integer NOT NULL,
      seq integer NOT NULL CHECK (seq > 0),
      ledger_entry_id bigint NOT NULL UNIQUE REFERENCES donation_ledger (id),
      donation_id uuid NOT NULL REFERENCES donations (id),
      refers_to text REFERENCES receipts (number),
      issued_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (organization, series, year, seq)
    )
  `.execute(db);
  await sql`CREATE INDEX receipts_donation ON receipts (donation_id)`.execute(db);
  await sql`
    CREATE TABLE receipt_queue (
      ledger_entry_id bigint PRIMARY KEY REFERENCES donation_ledger (id),
      mail boolean NOT NULL DEFAULT true
    )
  `.execute(db);
  await sql`
    CREATE FUNCTION receipt_enqueue() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO receipt_queue (ledger_entry_id) VALUES (NEW.id);
      RETURN NULL;
    END $$
  `.execute(db);
  await sql`
    CREATE TRIGGER donation_ledger_receipt AFTER INSERT ON donation_ledger
    FOR EACH ROW WHEN (NEW.entry_type IN ('DONATION', 'REFUND', 'CHARGEBACK'))
    EXECUTE FUNCTION receipt_enqueue()
  `.execute(db);
  await sql`
    INSERT INTO receipt_queue (ledger_entry_id, mail)
    SELECT id, false FROM donation_ledger WHERE entry_type IN ('DONATION', 'REFUND', 'CHARGEBACK')
  `.execute(db);
  await sql`
    CREATE TABLE mail_queue (
      receipt_number text PRIMARY KEY REFERENCES receipts (number),
      queued_at timestamptz NOT NULL DEFAULT now()
    )
  `.execute(db);
  await sql`
    CREATE TABLE mail_deliveries (
      receipt_number text PRIMARY KEY REFERENCES receipts (number),
      message_id text NOT NULL UNIQUE,
      status text NOT NULL CHECK (status IN ('sending', 'sent', 'failed', 'no-address')),
      attempts integer NOT NULL DEFAULT 1,
      last_error text,
      sent_at timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now()
    )
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS mail_deliveries, mail_queue`.execute(db);
  await sql`DROP TRIGGER IF EXISTS donation_ledger_receipt ON donation_ledger`.execute(db);
  await sql`DROP FUNCTION IF EXISTS receipt_enqueue()`.execute(db);
  await sql`DROP TABLE IF EXISTS receipt_queue, receipts`.execute(db);
}
