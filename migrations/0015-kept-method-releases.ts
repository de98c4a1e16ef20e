import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * A pledge's kept card is released at its provider once galang lets go of it (a cancel, a pause
 * after failed dunning, an erasure): the card is the donor's data, and nothing will charge it
 * again. The trigger records each method a pledge's row lets go of, whatever statement did it,
 * in the same transaction; reconciliation releases what is recorded (`released_at`), and one it
 * could not release keeps its `attempts` and `last_error` for an operator.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE kept_method_releases (
      provider text NOT NULL,
      saved_method text NOT NULL,
      pledge_id uuid NOT NULL REFERENCES pledges (id),
      let_go_at timestamptz NOT NULL DEFAULT now(),
      released_at timestamptz,
      attempts smallint NOT NULL DEFAULT 0,
      last_error text,
      PRIMARY KEY (provider, saved_method)
    )
  `.execute(db);
  await sql`
    CREATE INDEX kept_method_releases_due ON kept_method_releases (let_go_at)
      WHERE released_at IS NULL
  `.execute(db);
  await sql`
    CREATE FUNCTION record_let_go_method() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF OLD.saved_method IS NOT NULL AND OLD.saved_method IS DISTINCT FROM NEW.saved_method THEN
        INSERT INTO kept_method_releases (saved_method, provider, pledge_id)
          VALUES (OLD.saved_method, OLD.provider, OLD.id)
          ON CONFLICT (provider, saved_method) DO NOTHING;
      END IF;
      RETURN NEW;
    END
    $$
  `.execute(db);
  await sql`
    CREATE TRIGGER pledges_let_go_method AFTER UPDATE OF saved_method ON pledges
      FOR EACH ROW EXECUTE FUNCTION record_let_go_method()
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TRIGGER pledges_let_go_method ON pledges`.execute(db);
  await sql`DROP FUNCTION record_let_go_method()`.execute(db);
  await sql`DROP TABLE kept_method_releases`.execute(db);
}
