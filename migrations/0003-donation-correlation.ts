import type { Kysely } from 'kysely';

/**
 * The correlation id (the `X-Request-Id` of the request that started the donation) on the
 * donation row, so the webhook that completes a donation, which arrives in a request of its
 * own, can log it: one id finds every line of a donation. Nullable: older rows have none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('donations').addColumn('correlation_id', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('donations').dropColumn('correlation_id').execute();
}
