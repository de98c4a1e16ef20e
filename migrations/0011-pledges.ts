import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Monthly giving (docs/pledges.md). A pledge holds what each period charges (amount, method,
 * provider: changes apply from the next period) and its donor, as `donations` does, so an
 * erasure reaches it. `pledge_periods` is one row per period charged, keyed by the period, and
 * names that period's donation: an ordinary donation whose ID derives from pledge and period.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE pledges (
      id uuid PRIMARY KEY,
      client_id text NOT NULL,
      idempotency_key text NOT NULL,
      campaign_id text NOT NULL REFERENCES campaigns (id),
      amount bigint NOT NULL CHECK (amount > 0),
      currency text NOT NULL,
      frequency text NOT NULL CHECK (frequency IN ('monthly', 'weekly')),
      day_of_period smallint NOT NULL CHECK (day_of_period BETWEEN 1 AND 31),
      time_zone text NOT NULL,
      payment_method text NOT NULL,
      provider text NOT NULL,
      donor_name text NOT NULL,
      donor_email text NOT NULL,
      donor_anonymous boolean NOT NULL,
      message text,
      status text NOT NULL DEFAULT 'ACTIVE' CHECK (status IN ('ACTIVE', 'PAUSED', 'CANCELLED')),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      erased_at timestamptz
    )
  `.execute(db);
  await sql`CREATE INDEX pledges_donor_email ON pledges (lower(donor_email))`.execute(db);
  await sql`CREATE INDEX pledges_client ON pledges (client_id, created_at)`.execute(db);
  await sql`
    CREATE TABLE pledge_periods (
      pledge_id uuid NOT NULL REFERENCES pledges (id),
      period text NOT NULL,
      donation_id uuid NOT NULL UNIQUE,
      amount bigint NOT NULL CHECK (amount > 0),
      started_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (pledge_id, period)
    )
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE IF EXISTS pledge_periods, pledges`.execute(db);
}
