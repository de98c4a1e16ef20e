import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Donor erasure (docs/receipts-and-privacy.md). `donor_details` holds a donor's name, e-mail and
 * message from the edge's accept until the donation workflow records the donation, which moves
 * them into `donations` (and deletes the row) in one statement: the workflow's input never
 * carries them, so Temporal's histories hold no donor data to erase. `erased_at` marks a
 * donation whose donor was erased; the indexes find a donor's donations by e-mail.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE donor_details (
      donation_id uuid PRIMARY KEY,
      donor_name text NOT NULL,
      donor_email text NOT NULL,
      donor_anonymous boolean NOT NULL,
      message text,
      created_at timestamptz NOT NULL DEFAULT now()
    )
  `.execute(db);
  await sql`CREATE INDEX donor_details_email ON donor_details (lower(donor_email))`.execute(db);
  await sql`CREATE INDEX donations_donor_email ON donations (lower(donor_email))`.execute(db);
  await sql`ALTER TABLE donations ADD COLUMN erased_at timestamptz`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE donations DROP COLUMN IF EXISTS erased_at`.execute(db);
  await sql`DROP INDEX IF EXISTS donations_donor_email`.execute(db);
  await sql`DROP TABLE IF EXISTS donor_details`.execute(db);
}
