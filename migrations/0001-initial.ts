import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * The first schema. Money is BIGINT minor units. Every effect a retry, a reset or a duplicate
 * webhook could repeat is guarded by a unique key here, not by application code.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('campaigns')
    .addColumn('id', 'text', (c) => c.primaryKey().check(sql`id ~ '^[A-Za-z0-9_-]{1,64}$'`))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('goal_amount', 'bigint', (c) => c.notNull().check(sql`goal_amount > 0`))
    .addColumn('currency', sql`char(3)`, (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c
        .notNull()
        .defaultTo('OPEN')
        .check(sql`status IN ('OPEN', 'CLOSED')`),
    )
    .addColumn('ends_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('donations')
    .addColumn('id', 'uuid', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('idempotency_key', 'text', (c) => c.notNull())
    .addColumn('campaign_id', 'text', (c) => c.notNull().references('campaigns.id'))
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount > 0`))
    .addColumn('currency', sql`char(3)`, (c) => c.notNull())
    .addColumn('donor_name', 'text', (c) => c.notNull())
    .addColumn('donor_email', 'text', (c) => c.notNull())
    .addColumn('donor_anonymous', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('message', 'text')
    .addColumn('payment_method', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c
        .notNull()
        .defaultTo('PENDING')
        .check(
          sql`status IN ('PENDING', 'AWAITING_PAYMENT', 'CONFIRMED', 'REFUNDED', 'PARTIALLY_REFUNDED', 'CHARGED_BACK', 'FAILED', 'EXPIRED', 'CANCELED', 'NEEDS_REVIEW')`,
        ),
    )
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_reference', 'text')
    .addColumn('payment_action', 'jsonb')
    .addColumn('workflow_id', 'text', (c) => c.notNull().unique())
    .addColumn('failure_reason', 'text')
    .addColumn('confirmed_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // The permanent backstop against a second donation for one client request, long after the
    // edge's idempotency record and Temporal's workflow history are gone.
    .addUniqueConstraint('donations_client_idempotency_key', ['client_id', 'idempotency_key'])
    .addUniqueConstraint('donations_provider_reference', ['provider', 'provider_reference'])
    .execute();
  await db.schema
    .createIndex('donations_campaign_status')
    .on('donations')
    .columns(['campaign_id', 'status'])
    .execute();

  await db.schema
    .createTable('donation_ledger')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('donation_id', 'uuid', (c) => c.notNull().references('donations.id'))
    .addColumn('campaign_id', 'text', (c) => c.notNull().references('campaigns.id'))
    .addColumn('entry_type', 'text', (c) => c.notNull())
    // Signed: credits are positive, reversals (refunds, chargebacks) negative.
    .addColumn('amount', 'bigint', (c) => c.notNull().check(sql`amount <> 0`))
    .addColumn('currency', sql`char(3)`, (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('donation_ledger_once_per_type', ['donation_id', 'entry_type'])
    .execute();
  await db.schema
    .createIndex('donation_ledger_campaign')
    .on('donation_ledger')
    .column('campaign_id')
    .execute();

  await db.schema
    .createTable('campaign_totals')
    .addColumn('campaign_id', 'text', (c) => c.primaryKey().references('campaigns.id'))
    .addColumn('confirmed_amount', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('donation_count', 'integer', (c) => c.notNull().defaultTo(0))
    // Bumped on every change, so a cache rebuild that read an older row never wins.
    .addColumn('version', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('webhook_inbox')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('event_key', 'text', (c) => c.notNull())
    .addColumn('donation_id', 'uuid')
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('raw_body', 'text', (c) => c.notNull())
    .addColumn('received_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('processed_at', 'timestamptz')
    .addColumn('delivery_attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addUniqueConstraint('webhook_inbox_once_per_event', ['provider', 'event_key'])
    .execute();
  await db.schema
    .createIndex('webhook_inbox_unprocessed')
    .on('webhook_inbox')
    .column('received_at')
    .where(sql.ref('processed_at'), 'is', null)
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'webhook_inbox',
    'campaign_totals',
    'donation_ledger',
    'donations',
    'campaigns',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
