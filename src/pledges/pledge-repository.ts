import { sql } from 'kysely';
import type { Selectable } from 'kysely';
import type { Db } from '../db/database';
import type { PledgeStatus, PledgesTable } from '../db/schema';
import type { DonationStatus } from '../../workflows/contracts';
import type { PledgeInterval } from './pledge-calendar';

export interface Pledge {
  id: string;
  clientId: string;
  campaignId: string;
  amount: number;
  currency: string;
  interval: PledgeInterval;
  dayOfPeriod: number;
  timeZone: string;
  paymentMethod: string;
  provider: string;
  donor: { name: string; email: string; anonymous: boolean };
  message: string | null;
  status: PledgeStatus;
  /** The provider's reference to the method periods are charged with, without the donor. */
  savedMethod: string | null;
  /** Paused by galang because a period's every attempt failed (the dunning gave up). */
  pausedReason: 'payment-failed' | null;
  createdAt: Date;
  updatedAt: Date;
}

export type NewPledge = Omit<
  Pledge,
  'status' | 'savedMethod' | 'pausedReason' | 'createdAt' | 'updatedAt'
> & {
  idempotencyKey: string;
};

/** An attempt to charge a period (0, then the dunning's retries), with its donation's status. */
export interface PledgePeriod {
  period: string;
  attempt: number;
  donationId: string;
  amount: number;
  startedAt: Date;
  status: DonationStatus | null;
}

/** The statuses a pledge may move to each status from: a cancelled pledge stays cancelled. */
const ALLOWED_FROM: Record<PledgeStatus, PledgeStatus[]> = {
  ACTIVE: ['PAUSED'],
  PAUSED: ['ACTIVE'],
  CANCELLED: ['ACTIVE', 'PAUSED'],
};

/** All SQL about pledges and their periods. Inserts are keyed; changes are conditional. */
export class PledgeRepository {
  constructor(private readonly db: Db) {}

  /** Inserts the pledge once (a retried request finds the first), and returns it as stored. */
  async insert(pledge: NewPledge): Promise<Pledge> {
    await this.db
      .insertInto('pledges')
      .values({
        id: pledge.id,
        client_id: pledge.clientId,
        idempotency_key: pledge.idempotencyKey,
        campaign_id: pledge.campaignId,
        amount: pledge.amount,
        currency: pledge.currency,
        frequency: pledge.interval,
        day_of_period: pledge.dayOfPeriod,
        time_zone: pledge.timeZone,
        payment_method: pledge.paymentMethod,
        provider: pledge.provider,
        donor_name: pledge.donor.name,
        donor_email: pledge.donor.email,
        donor_anonymous: pledge.donor.anonymous,
        message: pledge.message,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .execute();
    const stored = await this.find(pledge.id);
    if (!stored) throw new Error(`Pledge ${pledge.id} vanished after insert`);
    return stored;
  }

  async find(id: string): Promise<Pledge | undefined> {
    const row = await this.db
      .selectFrom('pledges')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toPledge(row);
  }

  /** Moves the pledge to `status` from a status that allows it; undefined when none did. */
  async setStatus(id: string, status: PledgeStatus): Promise<Pledge | undefined> {
    const row = await this.db
      .updateTable('pledges')
      .set({
        status,
        paused_reason: null,
        // Nothing charges a cancelled pledge again: its kept card is let go (migration 0015).
        ...(status === 'CANCELLED' && { saved_method: null }),
        updated_at: sql`now()`,
      })
      .where('id', '=', id)
      .where('status', 'in', ALLOWED_FROM[status])
      .returningAll()
      .executeTakeFirst();
    return row && toPledge(row);
  }

  /** New amount or method, for the periods not started yet; a cancelled pledge keeps its own. */
  async update(
    id: string,
    change: { amount?: number | undefined; paymentMethod?: string | undefined },
  ): Promise<Pledge | undefined> {
    const row = await this.db
      .updateTable('pledges')
      .set({
        ...(change.amount !== undefined && { amount: change.amount }),
        ...(change.paymentMethod !== undefined && { payment_method: change.paymentMethod }),
        updated_at: sql`now()`,
      })
      .where('id', '=', id)
      .where('status', '<>', 'CANCELLED')
      .returningAll()
      .executeTakeFirst();
    return row && toPledge(row);
  }

  /**
   * Records that an attempt of `period` charges `donationId`, once, and only while the pledge
   * is active (a cancel between the action's read and this insert stops it here): the first
   * action of an attempt writes the row, every later one (a second fire, a retry, a reset)
   * finds it and gets the same donation; undefined when the pledge is no longer active and the
   * attempt was never recorded. Every attempt charges the amount its period's first started with.
   */
  async startPeriod(
    pledgeId: string,
    period: string,
    attempt: number,
    donationId: string,
    amount: number,
  ): Promise<{ donationId: string; amount: number } | undefined> {
    const first = attempt === 0 ? undefined : await this.attempt(pledgeId, period, 0);
    // Any key: two actions inserting the same attempt at once may meet on the donation's unique
    // index first, which a conflict target of the primary key would raise.
    await sql`
      INSERT INTO pledge_periods (pledge_id, period, attempt, donation_id, amount)
      SELECT ${pledgeId}, ${period}, ${attempt}, ${donationId}, ${first?.amount ?? amount}
       WHERE EXISTS (SELECT 1 FROM pledges WHERE id = ${pledgeId} AND status = 'ACTIVE')
      ON CONFLICT DO NOTHING
    `.execute(this.db);
    return this.attempt(pledgeId, period, attempt);
  }

  /**
   * One attempt of a period: its donation and amount, whether its payment action was sent to
   * the donor, and whether its failure ended the period's dunning.
   */
  async attempt(
    pledgeId: string,
    period: string,
    attempt: number,
  ): Promise<
    { donationId: string; amount: number; notified: boolean; gaveUp: boolean } | undefined
  > {
    const row = await this.db
      .selectFrom('pledge_periods')
      .select(['donation_id', 'amount', 'notified_at', 'gave_up_at'])
      .where('pledge_id', '=', pledgeId)
      .where('period', '=', period)
      .where('attempt', '=', attempt)
      .executeTakeFirst();
    return (
      row && {
        donationId: row.donation_id,
        amount: row.amount,
        notified: row.notified_at !== null,
        gaveUp: row.gave_up_at !== null,
      }
    );
  }

  /** Marks an attempt's payment action sent to the donor; true for the one call that did. */
  markNotified(pledgeId: string, period: string, attempt: number): Promise<boolean> {
    return markAttemptOnce(this.db, pledgeId, period, attempt, 'notified_at');
  }

  /** The pledge's periods' attempts, newest first, with their donations' status. */
  async periods(pledgeId: string, limit = 24): Promise<PledgePeriod[]> {
    const rows = await this.db
      .selectFrom('pledge_periods as p')
      .leftJoin('donations as d', 'd.id', 'p.donation_id')
      .select(['p.period', 'p.attempt', 'p.donation_id', 'p.amount', 'p.started_at', 'd.status'])
      .where('p.pledge_id', '=', pledgeId)
      .orderBy('p.period', 'desc')
      .orderBy('p.attempt', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      period: row.period,
      attempt: row.attempt,
      donationId: row.donation_id,
      amount: row.amount,
      startedAt: row.started_at,
      status: row.status,
    }));
  }

  /**
   * Keeps the method a credited payment left with the provider, for an active pledge that has
   * none: a payment settling after a cancel or an erasure does not bring a card back.
   */
  async keepMethod(id: string, savedMethod: string): Promise<void> {
    await this.db
      .updateTable('pledges')
      .set({ saved_method: savedMethod, updated_at: sql`now()` })
      .where('id', '=', id)
      .where('status', '=', 'ACTIVE')
      .where('saved_method', 'is', null)
      .execute();
  }

  /**
   * Pauses an active pledge whose period failed every attempt, and forgets its kept method (a
   * resumed pledge asks the donor to pay, and keeps the method they pay with then), once per
   * period: the period's last attempt is marked given up in the same transaction, so a second
   * workflow of the period (a second action, a reset) does not pause a pledge resumed since.
   * Nor does a period a later paid period has overtaken (a weekly pledge's long dunning).
   */
  async pauseForFailure(id: string, period: string, attempt: number): Promise<Pledge | undefined> {
    return this.db.transaction().execute(async (trx) => {
      if (!(await markAttemptOnce(trx, id, period, attempt, 'gave_up_at'))) return undefined;
      const row = await trx
        .updateTable('pledges')
        .set({
          status: 'PAUSED',
          paused_reason: 'payment-failed',
          saved_method: null,
          updated_at: sql`now()`,
        })
        .where('id', '=', id)
        .where('status', '=', 'ACTIVE')
        .where(
          sql<boolean>`NOT EXISTS (
            SELECT 1 FROM pledge_periods p JOIN donations d ON d.id = p.donation_id
             WHERE p.pledge_id = ${id} AND p.period > ${period} AND d.confirmed_at IS NOT NULL)`,
        )
        .returningAll()
        .executeTakeFirst();
      return row && toPledge(row);
    });
  }

  /** Pledges by status for operators, newest first. */
  async list(status: PledgeStatus | undefined, limit: number): Promise<Pledge[]> {
    let query = this.db.selectFrom('pledges').selectAll();
    if (status !== undefined) query = query.where('status', '=', status);
    const rows = await query.orderBy('created_at', 'desc').limit(limit).execute();
    return rows.map(toPledge);
  }

  /**
   * How many pledges are in each status, and how many active ones whose newest period's
   * donation ended without money (declined, expired, held for review): the metrics.
   */
  async counts(): Promise<Record<PledgeStatus | 'FAILING', number>> {
    const rows = await sql<{ status: PledgeStatus | 'FAILING'; n: number }>`
      SELECT status, count(*)::int AS n FROM pledges GROUP BY status
      UNION ALL
      SELECT 'FAILING', count(*)::int FROM pledges p
        JOIN LATERAL (SELECT donation_id FROM pledge_periods WHERE pledge_id = p.id
                       ORDER BY period DESC, attempt DESC LIMIT 1) last ON true
        JOIN donations d ON d.id = last.donation_id
       WHERE p.status = 'ACTIVE' AND d.status IN ('FAILED', 'EXPIRED', 'NEEDS_REVIEW')
    `.execute(this.db);
    const counts = { ACTIVE: 0, PAUSED: 0, CANCELLED: 0, FAILING: 0 };
    for (const row of rows.rows) counts[row.status] = row.n;
    return counts;
  }
}

/** Stamps one mark of an attempt if it has none yet; true for the one call that did. */
async function markAttemptOnce(
  db: Db,
  pledgeId: string,
  period: string,
  attempt: number,
  mark: 'notified_at' | 'gave_up_at',
): Promise<boolean> {
  const row = await db
    .updateTable('pledge_periods')
    .set({ [mark]: sql`now()` })
    .where('pledge_id', '=', pledgeId)
    .where('period', '=', period)
    .where('attempt', '=', attempt)
    .where(mark, 'is', null)
    .returning('donation_id')
    .executeTakeFirst();
  return row !== undefined;
}

function toPledge(row: Selectable<PledgesTable>): Pledge {
  return {
    id: row.id,
    clientId: row.client_id,
    campaignId: row.campaign_id,
    amount: row.amount,
    currency: row.currency,
    interval: row.frequency,
    dayOfPeriod: row.day_of_period,
    timeZone: row.time_zone,
    paymentMethod: row.payment_method,
    provider: row.provider,
    donor: { name: row.donor_name, email: row.donor_email, anonymous: row.donor_anonymous },
    message: row.message,
    status: row.status,
    savedMethod: row.saved_method,
    pausedReason: row.paused_reason,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
