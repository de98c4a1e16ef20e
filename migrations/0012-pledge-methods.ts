import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Saved payment methods and dunning for pledges (docs/pledges.md). `saved_method` is the
 * provider's reference to the method a pledge's periods are charged with, without the donor;
 * `paused_reason` says a pledge was paused by galang after its retries failed. A period may
 * take several attempts (the dunning retries), each its own donation: `attempt` joins the key.
 * `notified_at` marks the attempt whose payment action was sent to the donor; `gave_up_at` the
 * last attempt of a period whose failure paused the pledge (once per period).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE pledges ADD COLUMN saved_method text`.execute(db);
  await sql`
    ALTER TABLE pledges ADD COLUMN paused_reason text CHECK (paused_reason IN ('payment-failed'))
  `.execute(db);
  await sql`
    ALTER TABLE pledge_periods
      ADD COLUMN attempt smallint NOT NULL DEFAULT 0 CHECK (attempt BETWEEN 0 AND 9),
      ADD COLUMN notified_at timestamptz,
      ADD COLUMN gave_up_at timestamptz,
      DROP CONSTRAINT pledge_periods_pkey,
      ADD PRIMARY KEY (pledge_id, period, attempt)
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DELETE FROM pledge_periods WHERE attempt > 0`.execute(db);
  await sql`
    ALTER TABLE pledge_periods
      DROP CONSTRAINT pledge_periods_pkey,
      DROP COLUMN attempt,
      DROP COLUMN notified_at,
      DROP COLUMN gave_up_at,
      ADD PRIMARY KEY (pledge_id, period)
  `.execute(db);
  await sql`ALTER TABLE pledges DROP COLUMN saved_method, DROP COLUMN paused_reason`.execute(db);
}
