import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Documents are mailed in batches, one workflow a batch instead of one a document: a queued
 * document is claimed by a batch (`batch`, `claimed_at`) and leaves the queue when its
 * delivery ends, so a batch's retry sends only what is still to send. A delivery being sent is
 * held (`held_until`) by the attempt sending it, so an attempt that outlived its time and the
 * retry beside it never both send it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE mail_queue
      ADD COLUMN batch uuid,
      ADD COLUMN claimed_at timestamptz
  `.execute(db);
  await sql`ALTER TABLE mail_deliveries ADD COLUMN held_until timestamptz`.execute(db);
  await sql`CREATE INDEX mail_queue_batch ON mail_queue (batch) WHERE batch IS NOT NULL`.execute(
    db,
  );
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE mail_deliveries DROP COLUMN held_until`.execute(db);
  await sql`ALTER TABLE mail_queue DROP COLUMN batch, DROP COLUMN claimed_at`.execute(db);
}
