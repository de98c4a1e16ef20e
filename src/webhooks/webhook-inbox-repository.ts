import { sql } from 'kysely';
import type { ExpressionBuilder } from 'kysely';
import type { Database } from '../db/schema';
import type { Db } from '../db/database';
import type { WebhookEvent } from '../providers/payment-provider';
import { CLOSED_WITHOUT_MONEY } from '../../workflows/contracts';

export interface InboxEntry {
  id: string;
  provider: string;
  eventKey: string;
  /** The donation the event is bound to: named by it, of its provider and its payment. */
  donationId: string | null;
  event: WebhookEvent;
  /** The correlation id of the request that started the donation, when there is one. */
  correlationId: string | null;
  receivedAt: Date;
}

/** A new inbox row and what the same statement found about its donation. */
export interface RecordedEvent {
  id: string;
  donationId: string | null;
  correlationId: string | null;
}

/** The correlation id of an inbox row's donation: a primary-key lookup inside the statement. */
function correlationOf(eb: ExpressionBuilder<Database, 'webhook_inbox'>) {
  return eb
    .selectFrom('donations')
    .select('donations.correlation_id')
    .whereRef('donations.id', '=', 'webhook_inbox.donation_id')
    .as('correlation_id');
}

/** Which undelivered rows to take, by age in milliseconds. */
export interface DeliveryWindow {
  olderThanMs: number;
  newerThanMs?: number | undefined;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** All SQL about received webhooks: the durable record that precedes every acknowledgement. */
export class WebhookInboxRepository {
  constructor(private readonly db: Db) {}

  /**
   * Records an event once per (provider, event key) and binds it to its donation in the same
   * statement: the donation it names (by our id, else by the provider's payment reference) only
   * if it is that provider's and, once the donation has a payment, that payment's. Undefined when
   * the provider sent this event before: a duplicate costs one round trip.
   */
  async insert(
    provider: string,
    event: WebhookEvent,
    rawBody: string,
  ): Promise<RecordedEvent | undefined> {
    const row = await this.db
      .insertInto('webhook_inbox')
      .values((eb) => ({
        provider,
        event_key: event.eventKey,
        donation_id:
          event.kind === 'ignored'
            ? null
            : eb
                .selectFrom('donations')
                .select('id')
                .where('provider', '=', provider)
                .where((w) =>
                  event.donationRef !== undefined && UUID.test(event.donationRef)
                    ? w.and([
                        w('id', '=', event.donationRef.toLowerCase()),
                        w.or([
                          w('provider_reference', 'is', null),
                          w('provider_reference', '=', event.providerReference),
                        ]),
                      ])
                    : w('provider_reference', '=', event.providerReference),
                )
                .limit(1),
        payload: JSON.stringify(event),
        raw_body: rawBody,
      }))
      .onConflict((oc) => oc.columns(['provider', 'event_key']).doNothing())
      .returning((eb) => ['id', 'donation_id', correlationOf(eb)])
      .executeTakeFirst();
    return (
      row && { id: row.id, donationId: row.donation_id, correlationId: row.correlation_id ?? null }
    );
  }

  /**
   * Whether an event that bound to no donation names one that exists (of another provider or
   * payment): a forged or misrouted notification, not a late one. Read only on that rare path.
   */
  async namesAnotherPayment(event: WebhookEvent): Promise<boolean> {
    if (event.kind === 'ignored' || !event.donationRef || !UUID.test(event.donationRef)) {
      return false;
    }
    const row = await this.db
      .selectFrom('donations')
      .select('id')
      .where('id', '=', event.donationRef.toLowerCase())
      .executeTakeFirst();
    return row !== undefined;
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
   * Rows whose delivery has not succeeded, in arrival order, received at least `olderThanMs` ago
   * (younger ones are still in their own request) and, with `newerThanMs`, not longer ago than
   * that; past `after`, so a caller pages through rows that keep failing instead of seeing only
   * them.
   */
  async findUndelivered(
    limit: number,
    window: DeliveryWindow,
    after?: InboxCursor,
  ): Promise<InboxEntry[]> {
    const age = (ms: number) => sql<Date>`now() - make_interval(secs => ${ms / 1000})`;
    let query = this.db
      .selectFrom('webhook_inbox')
      .select((eb) => [
        'id',
        'provider',
        'event_key',
        'donation_id',
        'payload',
        'received_at',
        correlationOf(eb),
      ])
      .where('processed_at', 'is', null)
      .where('received_at', '<', age(window.olderThanMs));
    if (window.newerThanMs !== undefined) {
      query = query.where('received_at', '>=', age(window.newerThanMs));
    }
    if (after) query = query.where('id', '>', after);
    const rows = await query.orderBy('id').limit(limit).execute();
    return rows.map(toEntry);
  }

  /**
   * PAID notifications bound to donations that were closed without money: late payments that
   * were never applied (their delivery raced the donation's end), received at least
   * `olderThanMs` ago so the donation's own workflow has had its chance. Reconciliation hands
   * each to the late-payment workflow, which verifies it with the provider. Paged past `after`:
   * rows that will never apply must not hide newer ones.
   */
  async findUnappliedPayments(
    limit: number,
    olderThanMs: number,
    after?: InboxCursor,
  ): Promise<InboxEntry[]> {
    let query = this.db
      .selectFrom('webhook_inbox as w')
      .innerJoin('donations as d', 'd.id', 'w.donation_id')
      .select([
        'w.id',
        'w.provider',
        'w.event_key',
        'w.donation_id',
        'w.payload',
        'w.received_at',
        'd.correlation_id',
      ])
      .where(sql<boolean>`w.payload->>'kind' = 'payment' AND w.payload->>'status' = 'PAID'`)
      .where('d.status', 'in', CLOSED_WITHOUT_MONEY)
      .where('d.confirmed_at', 'is', null)
      .where('w.received_at', '<', sql<Date>`now() - make_interval(secs => ${olderThanMs / 1000})`);
    if (after) query = query.where('w.id', '>', after);
    const rows = await query.orderBy('w.id').limit(limit).execute();
    return rows.map(toEntry);
  }

  /**
   * Drops the raw bodies (payer data) of up to `limit` rows received more than `days` ago,
   * oldest first; the parsed event and the row's keys stay, which is all delivery and
   * reconciliation read. A purged row leaves the partial index of kept bodies
   * (`webhook_inbox_body_kept`), so the next page starts where this one ended: the index is
   * the keyset, and a page reads only what it purges. Answers how many this call purged.
   */
  async purgeBodies(days: number, limit: number): Promise<number> {
    const purged = await sql<{ id: string }>`
      WITH page AS (
        SELECT id FROM webhook_inbox
        WHERE body_purged_at IS NULL AND received_at < now() - make_interval(days => ${days})
        ORDER BY received_at, id
        LIMIT ${limit}
      )
      UPDATE webhook_inbox w SET raw_body = NULL, body_purged_at = now()
      FROM page
      WHERE w.id = page.id AND w.body_purged_at IS NULL
      RETURNING w.id
    `.execute(this.db);
    return purged.rows.length;
  }

  /** How many raw bodies {@link purgeBodies} would drop now, for a dry run. */
  async countPurgeable(days: number): Promise<number> {
    const row = await this.db
      .selectFrom('webhook_inbox')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('body_purged_at', 'is', null)
      .where('received_at', '<', sql<Date>`now() - make_interval(days => ${days})`)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
}

/**
 * Where a scan of the inbox goes on from: the id of the last row it read. Ids grow with arrival,
 * so id order is arrival order, and unlike a timestamp (microseconds in Postgres, milliseconds
 * in JS) the id comes back exactly.
 */
export type InboxCursor = string;

/**
 * Every row a scan finds, page by page: `scan` reads one page past a cursor, `visit` handles
 * each row. A page shorter than `limit` is the last.
 */
export async function forEachPage(
  limit: number,
  scan: (after: InboxCursor | undefined) => Promise<InboxEntry[]>,
  visit: (entry: InboxEntry) => Promise<void>,
): Promise<void> {
  let after: InboxCursor | undefined;
  for (;;) {
    const page = await scan(after);
    for (const entry of page) await visit(entry);
    const last = page.at(-1);
    if (page.length < limit || !last) return;
    after = last.id;
  }
}

function toEntry(row: {
  id: string;
  provider: string;
  event_key: string;
  donation_id: string | null;
  payload: unknown;
  received_at: Date;
  correlation_id: string | null;
}): InboxEntry {
  return {
    id: row.id,
    provider: row.provider,
    eventKey: row.event_key,
    donationId: row.donation_id,
    event: row.payload as WebhookEvent,
    correlationId: row.correlation_id,
    receivedAt: row.received_at,
  };
}
