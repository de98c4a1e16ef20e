import { sql } from 'kysely';
import type { Db } from '../db/database';
import type { DonationStatus } from '../../workflows/contracts';
import type { WallCursor } from './wall-cursor';

/**
 * Donations the wall lists: money confirmed and still (partly) kept. Refunded to zero, charged
 * back, or sent to review, a donation leaves the wall. Matches the `donations_wall` index.
 */
export const WALL_STATUSES: readonly DonationStatus[] = ['CONFIRMED', 'PARTIALLY_REFUNDED'];

/** One row of the wall: public columns only. */
export interface WallRow {
  id: string;
  publicName: string;
  /** Null when the campaign hides amounts; what is kept after partial refunds otherwise. */
  amount: number | null;
  /** Null when there is none or an operator hid it. */
  message: string | null;
  confirmedAt: Date;
  confirmedAtMicros: number;
}

/** What the wall needs of its campaign. */
export interface WallCampaign {
  currency: string;
  hideAmounts: boolean;
}

/**
 * All SQL of the donor wall. Its reads select public columns only (`public_name`, never
 * `donor_name`, `donor_email` or the provider's data), so no answer built from them can hold
 * a private name.
 */
export class DonorWallRepository {
  constructor(private readonly db: Db) {}

  async campaign(id: string): Promise<WallCampaign | undefined> {
    const row = await this.db
      .selectFrom('campaigns')
      .select(['currency', 'hide_amounts'])
      .where('id', '=', id)
      .executeTakeFirst();
    return row && { currency: row.currency, hideAmounts: row.hide_amounts };
  }

  /** A keyset page, newest confirmation first, after `cursor` when given. */
  async page(
    campaignId: string,
    hideAmounts: boolean,
    limit: number,
    cursor: WallCursor | undefined,
  ): Promise<WallRow[]> {
    let query = this.db
      .selectFrom('donations as d')
      .select([
        'd.id',
        'd.public_name',
        'd.confirmed_at',
        sql<string | null>`CASE WHEN d.message_hidden_at IS NULL THEN d.message END`.as('message'),
        // Exact: extract() is numeric since PostgreSQL 14.
        sql<number>`(extract(epoch FROM d.confirmed_at) * 1000000)::bigint`.as('micros'),
        // The amount is not even read when the campaign hides it.
        sql<number | null>`CASE WHEN ${hideAmounts} THEN NULL
          WHEN d.status = 'CONFIRMED' THEN d.amount
          ELSE (SELECT coalesce(sum(l.amount), 0) FROM donation_ledger l WHERE l.donation_id = d.id)
        END::bigint`.as('amount'),
      ])
      .where('d.campaign_id', '=', campaignId)
      .where('d.status', 'in', WALL_STATUSES)
      .where('d.confirmed_at', 'is not', null);
    if (cursor) {
      query = query.where(
        sql<boolean>`(d.confirmed_at, d.id) < (timestamptz 'epoch' + ${cursor.confirmedAtMicros}::bigint * interval '1 microsecond', ${cursor.id})`,
      );
    }
    const rows = await query
      .orderBy('d.confirmed_at', 'desc')
      .orderBy('d.id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      id: row.id,
      publicName: row.public_name,
      amount: row.amount,
      message: row.message,
      confirmedAt: row.confirmed_at ?? new Date(0),
      confirmedAtMicros: row.micros,
    }));
  }

  /**
   * Hides a donation's message from the wall; the first hiding stays. Returns the donation's
   * campaign and when it was hidden, or nothing when there is no such donation.
   */
  async hideMessage(
    donationId: string,
  ): Promise<{ campaignId: string; hiddenAt: Date } | undefined> {
    await this.db
      .updateTable('donations')
      .set({ message_hidden_at: sql`now()` })
      .where('id', '=', donationId)
      .where('message_hidden_at', 'is', null)
      .execute();
    const row = await this.db
      .selectFrom('donations')
      .select(['campaign_id', 'message_hidden_at'])
      .where('id', '=', donationId)
      .executeTakeFirst();
    if (!row?.message_hidden_at) return undefined;
    return { campaignId: row.campaign_id, hiddenAt: row.message_hidden_at };
  }
}
