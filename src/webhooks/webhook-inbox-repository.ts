import { sql } from 'kysely';
import type { Db } from '../db/database';
import type { WebhookEvent } from '../providers/payment-provider';

export interface InboxEntry {
  id: string;
  provider: string;
  eventKey: string;
  donationId: string | null;
  event: WebhookEvent;
}

/** All SQL about received webhooks: the durable record that precedes every acknowledgement. */
export class WebhookInboxRepository {
  constructor(private readonly db: Db) {}

  /**
   * Records an event once per (provider, event key). Returns the new row's id, or undefined when
   * the provider sent this event before.
   */
  async insert(
    provider: string,
    event: WebhookEvent,
    donationId: string | null,
    rawBody: string,
  ): Promise<string | undefined> {
    const row = await this.db
      .insertInto('webhook_inbox')
      .values({
        provider,
        event_key: event.eventKey,
        donation_id: donationId,
        payload: JSON.stringify(event),
        raw_body: rawBody,
      })
      .onConflict((oc) => oc.columns(['provider', 'event_key']).doNothing())
      .returning('id')
      .executeTakeFirst();
    return row?.id;
  }

  async markProcessed(id: string, note?: string): Promise<void> {
    await this.db
      .updateTable('webhook_inbox')
      .set({
        processed_at: sql`now()`,
        delivery_attempts: sql`delivery_attempts + 1`,
        last_error: note ?? null,
      })
      .where('id', '=', id)
      .where('processed_at', 'is', null)
      .execute();
  }

  async recordFailure(id: string, error: string): Promise<void> {
    await this.db
      .updateTable('webhook_inbox')
      .set({ delivery_attempts: sql`delivery_attempts + 1`, last_error: error.slice(0, 1000) })
      .where('id', '=', id)
      .execute();
  }

  /**
   * Rows whose delivery has not succeeded, oldest first, received at least `olderThanMs` ago
   * (younger ones are still in their own request).
   */
  async findUndelivered(limit: number, olderThanMs: number): Promise<InboxEntry[]> {
    const rows = await this.db
      .selectFrom('webhook_inbox')
      .select(['id', 'provider', 'event_key', 'donation_id', 'payload'])
      .where('processed_at', 'is', null)
      .where('received_at', '<', sql<Date>`now() - make_interval(secs => ${olderThanMs / 1000})`)
      .orderBy('received_at')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      id: row.id,
      provider: row.provider,
      eventKey: row.event_key,
      donationId: row.donation_id,
      event: row.payload as WebhookEvent,
    }));
  }

  async findByEventKey(provider: string, eventKey: string) {
    return this.db
      .selectFrom('webhook_inbox')
      .selectAll()
      .where('provider', '=', provider)
      .where('event_key', '=', eventKey)
      .executeTakeFirst();
  }
}
